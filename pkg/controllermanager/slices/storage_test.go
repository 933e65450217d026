package slices

import (
	"reflect"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
)

func TestOfferedClasses(t *testing.T) {
	now := metav1.Now()
	classes := []storagev1.StorageClass{
		{ObjectMeta: metav1.ObjectMeta{Name: "standard", Annotations: map[string]string{defaultClassAnnotation: "true"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "liqo"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "going", DeletionTimestamp: &now}},
		{ObjectMeta: metav1.ObjectMeta{Name: "fast"}},
	}
	want := []corev1beta1.StorageType{{StorageClassName: "fast"}, {StorageClassName: "standard", Default: true}}
	if got := OfferedClasses(classes, "liqo"); !reflect.DeepEqual(got, want) {
		t.Errorf("OfferedClasses = %+v, want %+v (not the virtual class, not one going)", got, want)
	}
}
