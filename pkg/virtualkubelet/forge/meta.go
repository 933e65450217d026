package forge

import (
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
)

// Annotations users put on local objects to steer their reflection.
const (
	// SkipReflectionAnnotation (any value) keeps an object out of the
	// reflection when its kind's policy is DenyList.
	SkipReflectionAnnotation = "liqo.io/skip-reflection"
	// AllowReflectionAnnotation (any value) lets an object in when its
	// kind's policy is AllowList.
	AllowReflectionAnnotation = "liqo.io/allow-reflection"
)

// ReasonReflectionConflict is the Event reason on a local object whose
// remote name is taken by an object the reflection did not create.
const ReasonReflectionConflict = "ReflectionConflict"

// ReasonReflectionRefused is the Event reason on a local object whose
// remote copy the provider refused (its admission policy or quota).
const ReasonReflectionRefused = "ReflectionRefused"

// Policy says which local objects of a kind are reflected.
type Policy string

const (
	// DenyList reflects every object but those annotated with
	// SkipReflectionAnnotation.
	DenyList Policy = "DenyList"
	// AllowList reflects only the objects annotated with
	// AllowReflectionAnnotation.
	AllowList Policy = "AllowList"
)

// Selected reports whether policy lets a local object with these
// annotations be reflected.
func (p Policy) Selected(annotations map[string]string) bool {
	if p == AllowList {
		_, ok := annotations[AllowReflectionAnnotation]
		return ok
	}
	_, skip := annotations[SkipReflectionAnnotation]
	return !skip
}

// RemoteMeta is the metadata of the remote copy of local: its labels and
// annotations, with the marks that say the copy is ours (only objects
// carrying them are ever updated or deleted remotely).
func RemoteMeta(local *metav1.ObjectMeta, name, namespace, localClusterID string) metav1.ObjectMeta {
	labels := make(map[string]string, len(local.Labels)+2)
	maps.Copy(labels, local.Labels)
	labels[consts.ManagedByLabel] = consts.ManagedByValue
	labels[consts.OriginClusterIDLabel] = localClusterID
	var annotations map[string]string
	if len(local.Annotations) > 0 {
		annotations = maps.Clone(local.Annotations)
		// Last-applied configurations are large and say nothing remotely.
		delete(annotations, corev1.LastAppliedConfigAnnotation)
		if len(annotations) == 0 {
			annotations = nil
		}
	}
	return metav1.ObjectMeta{Name: name, Namespace: namespace, Labels: labels, Annotations: annotations}
}

// Ours reports whether a remote object carries the marks RemoteMeta puts
// for localClusterID.
func Ours(remote metav1.Object, localClusterID string) bool {
	l := remote.GetLabels()
	return l[consts.ManagedByLabel] == consts.ManagedByValue && l[consts.OriginClusterIDLabel] == localClusterID
}
