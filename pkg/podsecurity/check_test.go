package podsecurity

import (
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

var specPath = field.NewPath("spec", "pod")

func plainSpec() *corev1.PodSpec {
	return &corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}
}

// hardenedSpec meets the restricted level, as a hardened chart's pod does.
func hardenedSpec() *corev1.PodSpec {
	return &corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To[int64](1000),
			SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
		Volumes: []corev1.Volume{{Name: "cache", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
		Containers: []corev1.Container{{Name: "app", Image: "busybox", SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false),
			Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}, Add: []corev1.Capability{"NET_BIND_SERVICE"}}}}},
	}
}

func sc(edit func(*corev1.SecurityContext)) func(*corev1.PodSpec, map[string]string) {
	return func(s *corev1.PodSpec, _ map[string]string) {
		s.Containers[0].SecurityContext = &corev1.SecurityContext{}
		edit(s.Containers[0].SecurityContext)
	}
}

func psc(edit func(*corev1.PodSecurityContext)) func(*corev1.PodSpec, map[string]string) {
	return func(s *corev1.PodSpec, _ map[string]string) {
		s.SecurityContext = &corev1.PodSecurityContext{}
		edit(s.SecurityContext)
	}
}

func annotation(k, v string) func(*corev1.PodSpec, map[string]string) {
	return func(_ *corev1.PodSpec, a map[string]string) { a[k] = v }
}

// TestBaseline breaks each baseline control once, and checks that exactly
// that is reported, naming the field, and that the variants the standard
// allows pass.
func TestBaseline(t *testing.T) {
	tests := []struct {
		name string
		edit func(*corev1.PodSpec, map[string]string)
		want string // "" if allowed
	}{
		{"a plain pod", func(*corev1.PodSpec, map[string]string) {}, ""},
		{"hostNetwork", func(s *corev1.PodSpec, _ map[string]string) { s.HostNetwork = true }, "spec.pod.hostNetwork must be false"},
		{"hostPID", func(s *corev1.PodSpec, _ map[string]string) { s.HostPID = true }, "spec.pod.hostPID must be false"},
		{"hostIPC", func(s *corev1.PodSpec, _ map[string]string) { s.HostIPC = true }, "spec.pod.hostIPC must be false"},
		{"privileged", sc(func(c *corev1.SecurityContext) { c.Privileged = ptr.To(true) }),
			`container "app": spec.pod.containers[0].securityContext.privileged must not be true`},
		{"explicitly unprivileged", sc(func(c *corev1.SecurityContext) { c.Privileged = ptr.To(false) }), ""},
		{"SYS_ADMIN", sc(func(c *corev1.SecurityContext) {
			c.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"CHOWN", "SYS_ADMIN"}}
		}), "spec.pod.containers[0].securityContext.capabilities.add must not include SYS_ADMIN"},
		{"default capabilities", sc(func(c *corev1.SecurityContext) {
			c.Capabilities = &corev1.Capabilities{Add: []corev1.Capability{"CHOWN", "NET_BIND_SERVICE", "KILL"}, Drop: []corev1.Capability{"NET_RAW"}}
		}), ""},
		{"hostPath", func(s *corev1.PodSpec, _ map[string]string) {
			s.Volumes = []corev1.Volume{{Name: "root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}}
		}, `spec.pod.volumes[0].hostPath must not be set (volume "root", path "/")`},
		{"hostPort", func(s *corev1.PodSpec, _ map[string]string) {
			s.Containers[0].Ports = []corev1.ContainerPort{{ContainerPort: 80}, {ContainerPort: 443, HostPort: 443}}
		}, "spec.pod.containers[0].ports[1].hostPort must be 0 or unset, got 443"},
		{"a probe to another host", func(s *corev1.PodSpec, _ map[string]string) {
			s.Containers[0].ReadinessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Host: "10.96.0.1"}}}
		}, `spec.pod.containers[0].readinessProbe.tcpSocket.host must be empty, got "10.96.0.1"`},
		{"a postStart hook to another host", func(s *corev1.PodSpec, _ map[string]string) {
			s.Containers[0].Lifecycle = &corev1.Lifecycle{PostStart: &corev1.LifecycleHandler{HTTPGet: &corev1.HTTPGetAction{Host: "metadata"}}}
		}, "spec.pod.containers[0].lifecycle.postStart.httpGet.host must be empty"},
		{"a probe of the pod itself", func(s *corev1.PodSpec, _ map[string]string) {
			s.Containers[0].LivenessProbe = &corev1.Probe{ProbeHandler: corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: "/healthz"}}}
		}, ""},
		{"unconfined AppArmor", sc(func(c *corev1.SecurityContext) {
			c.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}), "spec.pod.containers[0].securityContext.appArmorProfile.type must not be Unconfined"},
		{"unconfined AppArmor for the pod", psc(func(c *corev1.PodSecurityContext) {
			c.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeUnconfined}
		}), "spec.pod.securityContext.appArmorProfile.type must not be Unconfined"},
		{"localhost AppArmor", sc(func(c *corev1.SecurityContext) {
			c.AppArmorProfile = &corev1.AppArmorProfile{Type: corev1.AppArmorProfileTypeLocalhost, LocalhostProfile: ptr.To("k8s-web")}
		}), ""},
		{"an unconfined AppArmor annotation", annotation(AppArmorAnnotationPrefix+"app", "unconfined"),
			"metadata.annotations[container.apparmor.security.beta.kubernetes.io/app] must be"},
		{"a runtime/default AppArmor annotation", annotation(AppArmorAnnotationPrefix+"app", "runtime/default"), ""},
		{"a localhost AppArmor annotation", annotation(AppArmorAnnotationPrefix+"app", "localhost/k8s-web"), ""},
		{"spc_t", psc(func(c *corev1.PodSecurityContext) { c.SELinuxOptions = &corev1.SELinuxOptions{Type: "spc_t"} }),
			`spec.pod.securityContext.seLinuxOptions.type must be one of container_engine_t, container_init_t, container_kvm_t, container_t or unset, got "spc_t"`},
		{"container_t and a level", sc(func(c *corev1.SecurityContext) {
			c.SELinuxOptions = &corev1.SELinuxOptions{Type: "container_t", Level: "s0:c1,c2"}
		}), ""},
		{"an SELinux role", sc(func(c *corev1.SecurityContext) { c.SELinuxOptions = &corev1.SELinuxOptions{Role: "sysadm_r"} }),
			"spec.pod.containers[0].securityContext.seLinuxOptions.role must be unset"},
		{"an unmasked /proc", sc(func(c *corev1.SecurityContext) { c.ProcMount = ptr.To(corev1.UnmaskedProcMount) }),
			`spec.pod.containers[0].securityContext.procMount must be Default or unset, got "Unmasked"`},
		{"the default /proc", sc(func(c *corev1.SecurityContext) { c.ProcMount = ptr.To(corev1.DefaultProcMount) }), ""},
		{"unconfined seccomp", sc(func(c *corev1.SecurityContext) {
			c.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeUnconfined}
		}), "spec.pod.containers[0].securityContext.seccompProfile.type must not be Unconfined"},
		{"an unconfined seccomp annotation", annotation(SeccompContainerAnnotationPrefix+"app", "unconfined"),
			"metadata.annotations[container.seccomp.security.alpha.kubernetes.io/app] must not be unconfined"},
		{"a runtime/default seccomp annotation", annotation(SeccompPodAnnotation, "runtime/default"), ""},
		{"an unsafe sysctl", psc(func(c *corev1.PodSecurityContext) {
			c.Sysctls = []corev1.Sysctl{{Name: "kernel.shm_rmid_forced", Value: "1"}, {Name: "vm.overcommit_memory", Value: "1"}}
		}), `spec.pod.securityContext.sysctls[1] must name a safe sysctl, got "vm.overcommit_memory"`},
		{"safe sysctls", psc(func(c *corev1.PodSecurityContext) {
			c.Sysctls = []corev1.Sysctl{{Name: "net.ipv4.ip_local_port_range", Value: "1024 65000"}, {Name: "net.ipv4.tcp_keepalive_time", Value: "60"}}
		}), ""},
		{"a Windows host process", sc(func(c *corev1.SecurityContext) {
			c.WindowsOptions = &corev1.WindowsSecurityContextOptions{HostProcess: ptr.To(true)}
		}), "spec.pod.containers[0].securityContext.windowsOptions.hostProcess must not be true"},
		{"a privileged init container", func(s *corev1.PodSpec, _ map[string]string) {
			s.InitContainers = []corev1.Container{{Name: "setup", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}
		}, `init container "setup": spec.pod.initContainers[0].securityContext.privileged must not be true`},
		{"a privileged ephemeral container", func(s *corev1.PodSpec, _ map[string]string) {
			s.EphemeralContainers = []corev1.EphemeralContainer{{EphemeralContainerCommon: corev1.EphemeralContainerCommon{
				Name: "debug", SecurityContext: &corev1.SecurityContext{Privileged: ptr.To(true)}}}}
		}, `ephemeral container "debug": spec.pod.ephemeralContainers[0].securityContext.privileged must not be true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec, annotations := plainSpec(), map[string]string{}
			tt.edit(spec, annotations)
			bad := Check(Baseline, annotations, spec, specPath)
			if tt.want == "" {
				if len(bad) > 0 {
					t.Errorf("refused: %q", bad)
				}
				return
			}
			if len(bad) != 1 || !strings.Contains(bad[0], tt.want) || !strings.Contains(bad[0], "(Pod Security baseline: ") {
				t.Errorf("Check = %q, want one baseline refusal containing %q", bad, tt.want)
			}
		})
	}
}

// TestRestricted checks that a pod without hardening is refused at
// Restricted (for each control it misses) and admitted at Baseline, and
// that a hardened pod is admitted at both.
func TestRestricted(t *testing.T) {
	if bad := Check(Restricted, nil, hardenedSpec(), specPath); len(bad) > 0 {
		t.Errorf("a hardened pod was refused at restricted: %q", bad)
	}
	if bad := Check(Baseline, nil, plainSpec(), specPath); len(bad) > 0 {
		t.Errorf("a plain pod was refused at baseline: %q", bad)
	}
	bad := strings.Join(Check(Restricted, nil, plainSpec(), specPath), "\n")
	for _, want := range []string{
		"spec.pod.containers[0].securityContext.allowPrivilegeEscalation must be false",
		"spec.pod.containers[0].securityContext.runAsNonRoot must be true, here or in spec.pod.securityContext.runAsNonRoot",
		"spec.pod.containers[0].securityContext.seccompProfile.type must be RuntimeDefault or Localhost",
		"spec.pod.containers[0].securityContext.capabilities.drop must include ALL",
	} {
		if !strings.Contains(bad, want) {
			t.Errorf("a plain pod at restricted: %q does not say %q", bad, want)
		}
	}

	tests := []struct {
		name string
		edit func(*corev1.PodSpec)
		want string
	}{
		{"root user for the pod", func(s *corev1.PodSpec) { s.SecurityContext.RunAsUser = ptr.To[int64](0) },
			"spec.pod.securityContext.runAsUser must not be 0"},
		{"root user for a container", func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.RunAsUser = ptr.To[int64](0) },
			"spec.pod.containers[0].securityContext.runAsUser must not be 0"},
		{"a container allowed to run as root", func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.RunAsNonRoot = ptr.To(false) },
			"spec.pod.containers[0].securityContext.runAsNonRoot must not be false"},
		{"privilege escalation", func(s *corev1.PodSpec) { s.Containers[0].SecurityContext.AllowPrivilegeEscalation = ptr.To(true) },
			"spec.pod.containers[0].securityContext.allowPrivilegeEscalation must be false"},
		{"a capability besides NET_BIND_SERVICE", func(s *corev1.PodSpec) {
			s.Containers[0].SecurityContext.Capabilities.Add = []corev1.Capability{"CHOWN"}
		}, "spec.pod.containers[0].securityContext.capabilities.add may only include NET_BIND_SERVICE, got CHOWN"},
		{"no seccomp profile", func(s *corev1.PodSpec) { s.SecurityContext.SeccompProfile = nil },
			"spec.pod.containers[0].securityContext.seccompProfile.type must be RuntimeDefault or Localhost"},
		{"an NFS volume", func(s *corev1.PodSpec) {
			s.Volumes = append(s.Volumes, corev1.Volume{Name: "data", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs", Path: "/"}}})
		}, `spec.pod.volumes[1].nfs must not be set (volume "data"; allowed: configMap, csi,`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := hardenedSpec()
			tt.edit(spec)
			bad := Check(Restricted, nil, spec, specPath)
			if len(bad) != 1 || !strings.Contains(bad[0], tt.want) || !strings.Contains(bad[0], "(Pod Security restricted: ") {
				t.Errorf("Check = %q, want one restricted refusal containing %q", bad, tt.want)
			}
			if bad := Check(Baseline, nil, spec, specPath); len(bad) > 0 {
				t.Errorf("refused at baseline too: %q", bad)
			}
		})
	}
	// Per-container settings stand in for the pod's.
	perContainer := hardenedSpec()
	perContainer.SecurityContext = nil
	perContainer.Containers[0].SecurityContext.RunAsNonRoot = ptr.To(true)
	perContainer.Containers[0].SecurityContext.SeccompProfile = &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeLocalhost, LocalhostProfile: ptr.To("p.json")}
	if bad := Check(Restricted, nil, perContainer, specPath); len(bad) > 0 {
		t.Errorf("a pod hardened container by container was refused: %q", bad)
	}
}

func TestVolumeType(t *testing.T) {
	if got := VolumeType(&corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{}}); got != "hostPath" {
		t.Errorf("VolumeType(hostPath) = %q", got)
	}
	if got := VolumeType(&corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{}}); got != "persistentVolumeClaim" {
		t.Errorf("VolumeType(pvc) = %q", got)
	}
	if got := VolumeType(&corev1.VolumeSource{}); got != "" {
		t.Errorf("VolumeType(nothing) = %q", got)
	}
	all := VolumeTypes()
	for _, want := range []string{"hostPath", "emptyDir", "nfs", "csi", "ephemeral", "image", "projected"} {
		if !slices.Contains(all, want) {
			t.Errorf("VolumeTypes() = %v, lacks %s", all, want)
		}
	}
}

func TestLevel(t *testing.T) {
	var l Level
	if l.String() != "baseline" || l.Validate() != nil {
		t.Errorf("the unset level is %q (%v), want baseline", l, l.Validate())
	}
	if err := l.Set("restricted"); err != nil || l != Restricted {
		t.Errorf("Set(restricted) = %v, level %q", err, l)
	}
	for _, bad := range []string{"privileged", "Baseline", "none"} {
		if err := l.Set(bad); err == nil || l != Restricted {
			t.Errorf("Set(%q) = %v, level %q: want an error and the level unchanged", bad, err, l)
		}
	}
	got := NamespaceLabels("")
	if len(got) != 2 || got[EnforceLabel] != "baseline" || got[EnforceVersionLabel] != "latest" {
		t.Errorf("NamespaceLabels(unset) = %v", got)
	}
	if got := NamespaceLabels(Restricted); got[EnforceLabel] != "restricted" {
		t.Errorf("NamespaceLabels(restricted) = %v", got)
	}
}
