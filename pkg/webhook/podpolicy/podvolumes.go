package podpolicy

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
// tokens as projected Secrets), scratch space, and claims in the twin
// namespace, made by the storage fabric (persistentVolumeClaim) or from
// the pod's own template (ephemeral: the provider's ephemeral volume
// controller makes the claim in the twin namespace, where its
// ResourceQuota bounds the storage and the number of claims as it bounds
// the storage fabric's). Every other type reaches something of the
// provider's through its nodes: network storage the nodes can mount (nfs,
// iscsi, cephfs...), node drivers (csi, flexVolume), or the node's own
// files (hostPath, which baseline refuses anyway).
var allowedVolumeTypes = []string{"configMap", "secret", "projected", "downwardAPI", "emptyDir", "persistentVolumeClaim", "ephemeral"}

// vetVolumes refuses volumes of types the provider does not allow, and
// ephemeral volumes whose claim asks what a consumer's PVC may not.
func (p *PodPolicy) vetVolumes(spec *corev1.PodSpec, path *field.Path) (bad, claims []string) {
	for i := range spec.Volumes {
		v := &spec.Volumes[i]
		t := podsecurity.VolumeType(&v.VolumeSource)
		if e := v.Ephemeral; e != nil && e.VolumeClaimTemplate != nil {
			claims = append(claims, VetClaimSpec(&e.VolumeClaimTemplate.Spec,
				path.Child("volumes").Index(i).Child("ephemeral", "volumeClaimTemplate", "spec"), p.VirtualStorageClass)...)
		}
		if t == "" || t == "hostPath" || slices.Contains(allowedVolumeTypes, t) || slices.Contains(p.VolumeTypes, t) {
			// hostPath: refused by the Pod Security check, once.
			continue
		}
		bad = append(bad, fmt.Sprintf("%s must not be set (volume %q): offloaded pods may use %s volumes",
			path.Child("volumes").Index(i).Child(t), v.Name, strings.Join(append(slices.Clone(allowedVolumeTypes), p.VolumeTypes...), ", ")))
	}
	return bad, claims
}

// VetClaimSpec lists what a consumer's volume claim (a PVC of the storage
// fabric's, or the template of an ephemeral volume) may not ask of the
// provider: a given volume (volumeName, a selector: another tenant's
// released volume, the provider's pre-made ones), another object's data
// (dataSource, dataSourceRef), or the provider's own virtual class
// (virtualClass: the volume would be offloaded again, to the provider's
// providers). Its size is bound by the twin's ResourceQuota.
func VetClaimSpec(spec *corev1.PersistentVolumeClaimSpec, path *field.Path, virtualClass string) []string {
	var bad []string
	if spec.VolumeName != "" {
		bad = append(bad, path.Child("volumeName").String()+" must not be set: the provider's provisioner makes the volume")
	}
	if spec.Selector != nil {
		bad = append(bad, path.Child("selector").String()+" must not be set: the provider's provisioner makes the volume")
	}
	if spec.DataSource != nil || spec.DataSourceRef != nil {
		bad = append(bad, path.Child("dataSource").String()+" must not be set: a remote volume starts empty")
	}
	if c := spec.StorageClassName; c != nil && *c == "" {
		// The PV controller binds a claim of no class to any pre-made
		// volume of no class that fits: the provider's, with its data.
		bad = append(bad, path.Child("storageClassName").String()+` must not be "": a claim of no class binds one of the provider's `+
			"pre-made volumes; leave it unset for the provider's default class, or name a class")
	}
	if c := spec.StorageClassName; c != nil && *c != "" && *c == virtualClass {
		bad = append(bad, fmt.Sprintf("%s %q is this provider's virtual class: a remote volume must be a real one", path.Child("storageClassName"), *c))
	}
	return bad
}
