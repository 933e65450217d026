package slices

import (
	"context"
	"sort"

	storagev1 "k8s.io/api/storage/v1"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
)

// defaultClassAnnotation marks a cluster's default StorageClass.
const defaultClassAnnotation = "storageclass.kubernetes.io/is-default-class"

// storageClasses are the classes this provider offers its consumers'
// remote volumes: all but its own virtual class, the default one marked.
// Consumers check the class a PVC asks for against them.
func (r *ProviderReconciler) storageClasses(ctx context.Context) ([]corev1beta1.StorageType, error) {
	var list storagev1.StorageClassList
	if err := r.Client.List(ctx, &list); err != nil {
		return nil, err
	}
	return OfferedClasses(list.Items, r.VirtualStorageClass), nil
}

// OfferedClasses is storageClasses' pure part, sorted by name.
func OfferedClasses(classes []storagev1.StorageClass, virtual string) []corev1beta1.StorageType {
	var out []corev1beta1.StorageType
	for _, c := range classes {
		if c.Name == virtual || !c.DeletionTimestamp.IsZero() {
			continue
		}
		out = append(out, corev1beta1.StorageType{StorageClassName: c.Name, Default: c.Annotations[defaultClassAnnotation] == "true"})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].StorageClassName < out[j].StorageClassName })
	return out
}
