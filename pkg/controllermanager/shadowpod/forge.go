package shadowpod

import (
	"fmt"
	"hash/fnv"
	"maps"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/utils/ptr"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// ShadowPodLabel is set on every Pod kept for a ShadowPod, with the
// ShadowPod's name (see LabelValue), so that a selector finds the pods of
// offloaded workloads without reading owner references.
const ShadowPodLabel = "offloading.liqo.io/shadowpod"

// ForgePod builds the Pod that runs sp: same name and namespace, the
// ShadowPod's labels and annotations, its pod spec, and a controller owner
// reference so that the garbage collector deletes the Pod with the
// ShadowPod. Our two labels override the ShadowPod's own: the managed-by
// label is what the manager's Pod cache selects on, so a consumer must not be
// able to hide a Pod from us by setting it to something else. The Pod never
// mounts a token of the provider's ServiceAccount, whatever the ShadowPod
// says: a consumer's pod gets its own tokens from the consumer (the webhook
// refuses a ShadowPod asking for automounting; this covers one that leaves
// it unset, which the ServiceAccount would otherwise decide).
//
// o holds the provider's own choices for its consumers' pods (see
// PodOptions).
//
// translate maps the consumer's addresses into this cluster's view of them
// (the network fabric's Configuration of that consumer; nil without it):
// the host aliases that point at the consumer (its API server, reached
// through the fabric) are translated. Other aliases stay as they are: they
// name hosts for that pod alone and reach nothing it could not dial.
//
// The pod's grace periods are capped at o.MaxGracePeriod (capGracePeriods):
// a consumer must not keep a pod it deleted running for as long as it likes.
func ForgePod(sp *offv1beta1.ShadowPod, o PodOptions, translate func(string) (string, bool)) *corev1.Pod {
	pod, _ := forgePod(sp, o, translate)
	return pod
}

// forgePod is ForgePod, also returning the grace periods it capped.
func forgePod(sp *offv1beta1.ShadowPod, o PodOptions, translate func(string) (string, bool)) (*corev1.Pod, []string) {
	keep := func(k string) bool { return o.MetadataOnly == nil || !o.MetadataOnly(k) }
	labels := make(map[string]string, len(sp.Labels)+2)
	for k, v := range sp.Labels {
		if keep(k) {
			labels[k] = v
		}
	}
	labels[consts.ManagedByLabel] = consts.ManagedByValue
	labels[ShadowPodLabel] = LabelValue(sp.Name)

	var annotations map[string]string
	for k, v := range sp.Annotations {
		if !keep(k) {
			continue
		}
		if annotations == nil {
			annotations = make(map[string]string, len(sp.Annotations))
		}
		annotations[k] = v
	}

	spec := sp.Spec.Pod.DeepCopy()
	spec.AutomountServiceAccountToken = ptr.To(false)
	if translate != nil {
		for i := range spec.HostAliases {
			if ip, ok := translate(spec.HostAliases[i].IP); ok {
				spec.HostAliases[i].IP = ip
			}
		}
	}
	if len(o.NodeSelector) > 0 {
		if spec.NodeSelector == nil {
			spec.NodeSelector = map[string]string{}
		}
		maps.Copy(spec.NodeSelector, o.NodeSelector)
	}
	if !o.KeepImagePullPolicy {
		alwaysPull(spec)
	}
	capped := capGracePeriods(spec, seconds(o.MaxGracePeriod))

	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:        sp.Name,
			Namespace:   sp.Namespace,
			Labels:      labels,
			Annotations: annotations,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion:         offv1beta1.GroupVersion.String(),
				Kind:               "ShadowPod",
				Name:               sp.Name,
				UID:                sp.UID,
				Controller:         ptr.To(true),
				BlockOwnerDeletion: ptr.To(true),
			}},
		},
		Spec: *spec,
	}, capped
}

// PodOptions are the provider's own choices for the pods it makes for its
// consumers.
type PodOptions struct {
	// NodeSelector restricts the nodes the pods run on
	// (--offloaded-pod-node-selector); it is added to the pod's, winning
	// over a consumer's entry of the same key.
	NodeSelector map[string]string
	// MetadataOnly (nil: none) picks the annotation and label keys the
	// ShadowPod may carry but the Pod must not: the consumer's mesh and
	// cloud identity settings (podpolicy.PodPolicy.MetadataOnly), which the
	// provider's sidecar injectors and identity agents would otherwise act
	// upon, as the provider's. Labels are dropped too because some of those
	// systems read labels as well (sidecar.istio.io/inject).
	MetadataOnly func(key string) bool
	// MaxGracePeriod caps how long a pod may take to stop, whatever its
	// spec asks (see capGracePeriods); 0 caps nothing.
	MaxGracePeriod time.Duration
	// KeepImagePullPolicy keeps the consumer's imagePullPolicy; by default
	// every container pulls Always (see alwaysPull).
	KeepImagePullPolicy bool
}

// alwaysPull sets every container of spec to pull its image Always, as
// Kubernetes' AlwaysPullImages admission plugin does. A node's image cache
// is shared by everyone whose pods run there: with IfNotPresent a
// consumer naming a private image another tenant (or the provider) pulled
// with its own credentials would run it without any. With Always the
// kubelet asks the registry first, with the pod's pull secrets (the
// consumer's), and a consumer without the right to the image gets
// ErrImagePull; layers already on the node are not downloaded again.
func alwaysPull(spec *corev1.PodSpec) {
	for i := range spec.InitContainers {
		spec.InitContainers[i].ImagePullPolicy = corev1.PullAlways
	}
	for i := range spec.Containers {
		spec.Containers[i].ImagePullPolicy = corev1.PullAlways
	}
	for i := range spec.EphemeralContainers {
		spec.EphemeralContainers[i].ImagePullPolicy = corev1.PullAlways
	}
}

// LabelValue is name itself when it is a valid label value. Pod names may be
// up to 253 characters while label values stop at 63, so a longer name is
// cut and suffixed with a hash of the whole name: the value stays valid,
// deterministic and, in practice, distinct.
func LabelValue(name string) string {
	if len(validation.IsValidLabelValue(name)) == 0 {
		return name
	}
	h := fnv.New32a()
	_, _ = h.Write([]byte(name))
	suffix := fmt.Sprintf("%08x", h.Sum32())
	prefix := name
	if n := validation.LabelValueMaxLength - len(suffix) - 1; len(prefix) > n {
		prefix = prefix[:n]
	}
	// A label value must start and end with an alphanumeric character.
	prefix = strings.Trim(prefix, "-._")
	if prefix == "" {
		return suffix
	}
	return prefix + "-" + suffix
}
