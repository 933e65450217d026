package podpolicy

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// defaultServiceAccount is the only ServiceAccount an offloaded pod runs
// as: the one every namespace gets, which this provider grants nothing.
const defaultServiceAccount = "default"

// vetIdentity refuses a pod asking for the provider's credentials: a
// ServiceAccount of the provider's (one an administrator created in the
// twin, or granted rights), its token mounted automatically, or a token or
// certificate the provider would issue through a projected volume. The
// pod's own ServiceAccount token comes from the consumer, as a Secret the
// reflection keeps in the twin namespace; the ShadowPod controller turns
// automounting off when the pod leaves it unset.
func vetIdentity(spec *corev1.PodSpec, path *field.Path) []string {
	var bad []string
	for _, f := range []struct{ name, value string }{
		{"serviceAccountName", spec.ServiceAccountName},
		{"serviceAccount", spec.DeprecatedServiceAccount},
	} {
		if f.value != "" && f.value != defaultServiceAccount {
			bad = append(bad, fmt.Sprintf("%s must be empty or %s, got %q: offloaded pods run as the provider's default ServiceAccount",
				path.Child(f.name), defaultServiceAccount, f.value))
		}
	}
	if a := spec.AutomountServiceAccountToken; a != nil && *a {
		bad = append(bad, fmt.Sprintf("%s must be false or unset: it would mount a token of the provider's; "+
			"the pod's own ServiceAccount token is reflected from the consumer as a Secret", path.Child("automountServiceAccountToken")))
	}
	for i, v := range spec.Volumes {
		if v.Projected == nil {
			continue
		}
		for j, src := range v.Projected.Sources {
			sPath := path.Child("volumes").Index(i).Child("projected", "sources").Index(j)
			switch {
			case src.ServiceAccountToken != nil:
				bad = append(bad, fmt.Sprintf("%s must not be set (volume %q): the provider issues no tokens to consumers' pods; "+
					"the reflection mounts the consumer's tokens from Secrets", sPath.Child("serviceAccountToken"), v.Name))
			case src.PodCertificate != nil:
				bad = append(bad, fmt.Sprintf("%s must not be set (volume %q): the provider issues no certificates to consumers' pods",
					sPath.Child("podCertificate"), v.Name))
			case src.ClusterTrustBundle != nil:
				bad = append(bad, fmt.Sprintf("%s must not be set (volume %q): the provider's trust bundles are not the consumer's",
					sPath.Child("clusterTrustBundle"), v.Name))
			}
		}
	}
	return bad
}
