package podsecurity

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	// baselineCapabilities are the capabilities a container may add at
	// baseline: the container runtimes' default set, which grants nothing
	// over the node.
	baselineCapabilities = sets.New[corev1.Capability]("AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL",
		"MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT")
	// safeSysctls are namespaced in the pod and isolated from the node and
	// other pods.
	safeSysctls = sets.New("kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.ip_unprivileged_port_start",
		"net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
		"net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes",
		"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem")
	// seLinuxTypes are the container types; any other (spc_t) escapes
	// the container's confinement.
	seLinuxTypes = sets.New("", "container_t", "container_init_t", "container_kvm_t", "container_engine_t")
)

// The annotations through which older Kubernetes versions, and still the
// API server's version-skew handling, set AppArmor and seccomp profiles.
const (
	AppArmorAnnotationPrefix         = "container.apparmor.security.beta.kubernetes.io/"
	SeccompPodAnnotation             = "seccomp.security.alpha.kubernetes.io/pod"
	SeccompContainerAnnotationPrefix = "container.seccomp.security.alpha.kubernetes.io/"

	appArmorRuntimeDefault  = "runtime/default"
	appArmorLocalhostPrefix = "localhost/"
	seccompUnconfinedValue  = "unconfined"
)

// The controls of the standard, as messages name them.
const (
	hostNamespacesControl = "host namespaces"
	hostProcessControl    = "Windows HostProcess"
	privilegedControl     = "privileged containers"
	capabilitiesControl   = "capabilities"
	hostPathControl       = "hostPath volumes"
	hostPortsControl      = "host ports"
	hostProbeControl      = "probes and lifecycle hooks"
	appArmorControl       = "AppArmor"
	seLinuxControl        = "SELinux"
	procMountControl      = "/proc mount type"
	seccompControl        = "seccomp"
	sysctlsControl        = "sysctls"

	mustNotBeTrue       = "must not be true"
	mustNotBeUnconfined = "must not be Unconfined"
)

// baseline lists what breaks the baseline level.
func baseline(annotations map[string]string, spec *corev1.PodSpec, specPath *field.Path) []string {
	var bad []string
	add := func(who string, path *field.Path, must, control string) {
		bad = append(bad, violation(who, path, must, Baseline, control))
	}

	for _, h := range []struct {
		name string
		on   bool
	}{{"hostNetwork", spec.HostNetwork}, {"hostPID", spec.HostPID}, {"hostIPC", spec.HostIPC}} {
		if h.on {
			add("", specPath.Child(h.name), "must be false", hostNamespacesControl)
		}
	}
	if psc := spec.SecurityContext; psc != nil {
		scPath := specPath.Child("securityContext")
		if psc.WindowsOptions != nil && ptrTrue(psc.WindowsOptions.HostProcess) {
			add("", scPath.Child("windowsOptions", "hostProcess"), mustNotBeTrue, hostProcessControl)
		}
		if psc.AppArmorProfile != nil && psc.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined {
			add("", scPath.Child("appArmorProfile", "type"), mustNotBeUnconfined, appArmorControl)
		}
		for _, m := range badSELinux(psc.SELinuxOptions, scPath.Child("seLinuxOptions")) {
			add("", m.path, m.must, seLinuxControl)
		}
		if psc.SeccompProfile != nil && psc.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
			add("", scPath.Child("seccompProfile", "type"), mustNotBeUnconfined, seccompControl)
		}
		for i, s := range psc.Sysctls {
			if !safeSysctls.Has(s.Name) {
				add("", scPath.Child("sysctls").Index(i), fmt.Sprintf("must name a safe sysctl, got %q (safe: %s)",
					s.Name, strings.Join(sets.List(safeSysctls), ", ")), sysctlsControl)
			}
		}
	}
	for i, v := range spec.Volumes {
		if v.HostPath != nil {
			add("", specPath.Child("volumes").Index(i).Child("hostPath"),
				fmt.Sprintf("must not be set (volume %q, path %q): it would expose the node's file system", v.Name, v.HostPath.Path), hostPathControl)
		}
	}
	for _, c := range containers(spec, specPath) {
		bad = append(bad, baselineContainer(c)...)
	}
	bad = append(bad, baselineAnnotations(annotations)...)
	return bad
}

// baselineContainer lists what one container breaks of the baseline level.
func baselineContainer(c container) []string {
	var bad []string
	add := func(path *field.Path, must, control string) {
		bad = append(bad, violation(c.who(), path, must, Baseline, control))
	}
	for i, p := range c.Ports {
		if p.HostPort != 0 {
			add(c.path.Child("ports").Index(i).Child("hostPort"), fmt.Sprintf("must be 0 or unset, got %d", p.HostPort), hostPortsControl)
		}
	}
	for _, h := range hostedHandlers(c) {
		add(h.path, fmt.Sprintf("must be empty, got %q: the kubelet would connect there from the node's network", h.host), hostProbeControl)
	}
	sc := c.SecurityContext
	if sc == nil {
		return bad
	}
	scPath := c.path.Child("securityContext")
	if sc.WindowsOptions != nil && ptrTrue(sc.WindowsOptions.HostProcess) {
		add(scPath.Child("windowsOptions", "hostProcess"), mustNotBeTrue, hostProcessControl)
	}
	if ptrTrue(sc.Privileged) {
		add(scPath.Child("privileged"), mustNotBeTrue, privilegedControl)
	}
	if sc.Capabilities != nil {
		var extra []string
		for _, cp := range sc.Capabilities.Add {
			if !baselineCapabilities.Has(cp) {
				extra = append(extra, string(cp))
			}
		}
		if len(extra) > 0 {
			allowed := make([]string, 0, baselineCapabilities.Len())
			for _, cp := range sets.List(baselineCapabilities) {
				allowed = append(allowed, string(cp))
			}
			add(scPath.Child("capabilities", "add"), fmt.Sprintf("must not include %s (allowed: %s)",
				strings.Join(extra, ", "), strings.Join(allowed, ", ")), capabilitiesControl)
		}
	}
	if sc.AppArmorProfile != nil && sc.AppArmorProfile.Type == corev1.AppArmorProfileTypeUnconfined {
		add(scPath.Child("appArmorProfile", "type"), mustNotBeUnconfined, appArmorControl)
	}
	for _, m := range badSELinux(sc.SELinuxOptions, scPath.Child("seLinuxOptions")) {
		add(m.path, m.must, seLinuxControl)
	}
	if sc.ProcMount != nil && *sc.ProcMount != corev1.DefaultProcMount {
		add(scPath.Child("procMount"), fmt.Sprintf("must be Default or unset, got %q", *sc.ProcMount), procMountControl)
	}
	if sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeUnconfined {
		add(scPath.Child("seccompProfile", "type"), mustNotBeUnconfined, seccompControl)
	}
	return bad
}

// hosted is a probe or lifecycle handler that names a host to connect to.
type hosted struct {
	path *field.Path
	host string
}

// hostedHandlers lists the container's probes and lifecycle hooks that
// name a host: the kubelet makes those connections from the node, so a
// host other than the pod's own reaches whatever the node reaches.
func hostedHandlers(c container) []hosted {
	var out []hosted
	check := func(path *field.Path, http *corev1.HTTPGetAction, tcp *corev1.TCPSocketAction) {
		if http != nil && http.Host != "" {
			out = append(out, hosted{path.Child("httpGet", "host"), http.Host})
		}
		if tcp != nil && tcp.Host != "" {
			out = append(out, hosted{path.Child("tcpSocket", "host"), tcp.Host})
		}
	}
	for name, p := range map[string]*corev1.Probe{"livenessProbe": c.LivenessProbe, "readinessProbe": c.ReadinessProbe, "startupProbe": c.StartupProbe} {
		if p != nil {
			check(c.path.Child(name), p.HTTPGet, p.TCPSocket)
		}
	}
	if l := c.Lifecycle; l != nil {
		for name, h := range map[string]*corev1.LifecycleHandler{"postStart": l.PostStart, "preStop": l.PreStop} {
			if h != nil {
				check(c.path.Child("lifecycle", name), h.HTTPGet, h.TCPSocket)
			}
		}
	}
	// Map order is random: keep messages stable.
	sort.Slice(out, func(i, j int) bool { return out[i].path.String() < out[j].path.String() })
	return out
}

type fieldMust struct {
	path *field.Path
	must string
}

// badSELinux lists what SELinux options may not set: a type other than
// the container ones, or any user or role.
func badSELinux(o *corev1.SELinuxOptions, path *field.Path) []fieldMust {
	if o == nil {
		return nil
	}
	var out []fieldMust
	if !seLinuxTypes.Has(o.Type) {
		out = append(out, fieldMust{path.Child("type"), fmt.Sprintf("must be one of %s or unset, got %q",
			strings.Join(slices.DeleteFunc(sets.List(seLinuxTypes), func(s string) bool { return s == "" }), ", "), o.Type)})
	}
	if o.User != "" {
		out = append(out, fieldMust{path.Child("user"), fmt.Sprintf("must be unset, got %q", o.User)})
	}
	if o.Role != "" {
		out = append(out, fieldMust{path.Child("role"), fmt.Sprintf("must be unset, got %q", o.Role)})
	}
	return out
}

// baselineAnnotations checks the AppArmor and seccomp profiles set by
// annotation.
func baselineAnnotations(annotations map[string]string) []string {
	var bad []string
	path := field.NewPath("metadata", "annotations")
	for _, k := range sets.List(sets.KeySet(annotations)) {
		v := annotations[k]
		switch {
		case strings.HasPrefix(k, AppArmorAnnotationPrefix):
			if v != "" && v != appArmorRuntimeDefault && !strings.HasPrefix(v, appArmorLocalhostPrefix) {
				bad = append(bad, violation("", path.Key(k), fmt.Sprintf("must be %q or %s<profile>, got %q",
					appArmorRuntimeDefault, appArmorLocalhostPrefix, v), Baseline, appArmorControl))
			}
		case k == SeccompPodAnnotation || strings.HasPrefix(k, SeccompContainerAnnotationPrefix):
			if v == seccompUnconfinedValue {
				bad = append(bad, violation("", path.Key(k), "must not be "+seccompUnconfinedValue, Baseline, seccompControl))
			}
		}
	}
	return bad
}

func ptrTrue(b *bool) bool { return b != nil && *b }
