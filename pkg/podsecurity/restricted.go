package podsecurity

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// restrictedVolumeTypes are the volumes a restricted pod may use: those
// whose content the cluster controls, none reaching the node or the
// network on the pod's behalf.
var restrictedVolumeTypes = sets.New("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image",
	"persistentVolumeClaim", "projected", "secret")

const (
	volumeTypesControl         = "volume types"
	privilegeEscalationControl = "privilege escalation"
	runAsNonRootControl        = "running as non-root"
	runAsUserControl           = "running as non-root user"
	restrictedSeccompControl   = "seccomp"
	restrictedCapsControl      = "capabilities"
	allCapabilities            = corev1.Capability("ALL")
	netBindService             = corev1.Capability("NET_BIND_SERVICE")
)

// restricted lists what breaks the restricted level beyond baseline.
func restricted(spec *corev1.PodSpec, specPath *field.Path) []string {
	var bad []string
	add := func(who string, path *field.Path, must, control string) {
		bad = append(bad, violation(who, path, must, Restricted, control))
	}
	for i := range spec.Volumes {
		if t := VolumeType(&spec.Volumes[i].VolumeSource); t != "" && t != "hostPath" && !restrictedVolumeTypes.Has(t) {
			add("", specPath.Child("volumes").Index(i).Child(t), fmt.Sprintf("must not be set (volume %q; allowed: %s)",
				spec.Volumes[i].Name, strings.Join(sets.List(restrictedVolumeTypes), ", ")), volumeTypesControl)
		}
	}

	psc := spec.SecurityContext
	if psc == nil {
		psc = &corev1.PodSecurityContext{}
	}
	scPath := specPath.Child("securityContext")
	podNonRoot := ptrTrue(psc.RunAsNonRoot)
	if psc.RunAsUser != nil && *psc.RunAsUser == 0 {
		add("", scPath.Child("runAsUser"), "must not be 0", runAsUserControl)
	}
	podSeccomp := psc.SeccompProfile != nil && confinedSeccomp(psc.SeccompProfile.Type)

	for _, c := range containers(spec, specPath) {
		sc := c.SecurityContext
		if sc == nil {
			sc = &corev1.SecurityContext{}
		}
		cPath := c.path.Child("securityContext")
		if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
			add(c.who(), cPath.Child("allowPrivilegeEscalation"), "must be false", privilegeEscalationControl)
		}
		switch {
		case sc.RunAsNonRoot != nil && !*sc.RunAsNonRoot:
			add(c.who(), cPath.Child("runAsNonRoot"), "must not be false", runAsNonRootControl)
		case sc.RunAsNonRoot == nil && !podNonRoot:
			add(c.who(), cPath.Child("runAsNonRoot"), "must be true, here or in "+scPath.Child("runAsNonRoot").String(), runAsNonRootControl)
		}
		if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
			add(c.who(), cPath.Child("runAsUser"), "must not be 0", runAsUserControl)
		}
		if sc.SeccompProfile == nil && !podSeccomp {
			add(c.who(), cPath.Child("seccompProfile", "type"), "must be RuntimeDefault or Localhost, here or in "+
				scPath.Child("seccompProfile", "type").String(), restrictedSeccompControl)
		}
		var caps corev1.Capabilities
		if sc.Capabilities != nil {
			caps = *sc.Capabilities
		}
		if !slices.Contains(caps.Drop, allCapabilities) {
			add(c.who(), cPath.Child("capabilities", "drop"), "must include ALL", restrictedCapsControl)
		}
		for _, cp := range caps.Add {
			if cp != netBindService {
				add(c.who(), cPath.Child("capabilities", "add"), fmt.Sprintf("may only include NET_BIND_SERVICE, got %s", cp), restrictedCapsControl)
			}
		}
	}
	return bad
}

// confinedSeccomp tells whether a profile type confines the pod.
func confinedSeccomp(t corev1.SeccompProfileType) bool {
	return t == corev1.SeccompProfileTypeRuntimeDefault || t == corev1.SeccompProfileTypeLocalhost
}
