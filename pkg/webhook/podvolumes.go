package webhook

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/liqo-go/liqo/pkg/podsecurity"
)

// allowedVolumeTypes are the volumes whose content is the pod's own or
// its namespace's: what the reflection brings (ConfigMaps, Secrets,
// tokens as projected Secrets) and scratch space. Every other type
// reaches something of the provider's through its nodes: network storage
// the nodes can mount (nfs, iscsi, cephfs...), node drivers (csi,
// flexVolume), storage provisioned outside the consumer's quota
// (ephemeral), or the node's own files (hostPath, which baseline refuses
// anyway). A PersistentVolumeClaim must exist in the twin namespace, and
// consumers cannot create one.
var allowedVolumeTypes = []string{"configMap", "secret", "projected", "downwardAPI", "emptyDir", "persistentVolumeClaim"}

// vetVolumes refuses volumes of types the provider does not allow.
func (p *PodPolicy) vetVolumes(spec *corev1.PodSpec, path *field.Path) []string {
	var bad []string
	for i := range spec.Volumes {
		t := podsecurity.VolumeType(&spec.Volumes[i].VolumeSource)
		if t == "" || t == "hostPath" || slices.Contains(allowedVolumeTypes, t) || slices.Contains(p.VolumeTypes, t) {
			// hostPath: refused by the Pod Security check, once.
			continue
		}
		bad = append(bad, fmt.Sprintf("%s must not be set (volume %q): offloaded pods may use %s volumes",
			path.Child("volumes").Index(i).Child(t), spec.Volumes[i].Name, strings.Join(append(slices.Clone(allowedVolumeTypes), p.VolumeTypes...), ", ")))
	}
	return bad
}
