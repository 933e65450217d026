package reflection

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
)

// TestLocalPodCached: a local pod keeps its whole spec until its remote
// pod has reported, and then only its node name and what the token keeper
// reads; managed fields always go.
func TestLocalPodCached(t *testing.T) {
	token := corev1.Volume{Name: "kube-api-access", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}}}}}}
	pod := func(reported bool) *corev1.Pod {
		p := testPod("shop", "web")
		p.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
		p.Spec.ServiceAccountName = "app"
		p.Spec.Volumes = []corev1.Volume{token, {Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
		if reported {
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "app"}}
		}
		return p
	}
	for _, reported := range []bool{false, true} {
		out, err := localPodCached(pod(reported))
		if err != nil {
			t.Fatal(err)
		}
		got := out.(*corev1.Pod)
		if got.ManagedFields != nil {
			t.Errorf("reported %v: managed fields kept", reported)
		}
		want := pod(reported).Spec
		if reported {
			want = corev1.PodSpec{NodeName: vnodeName, ServiceAccountName: "app", Volumes: []corev1.Volume{token}}
		}
		if !equality.Semantic.DeepEqual(got.Spec, want) {
			t.Errorf("reported %v: cached spec %+v, want %+v", reported, got.Spec, want)
		}
		if refs, wantRefs := forge.PodTokens(&got.Spec), forge.PodTokens(&pod(reported).Spec); !equality.Semantic.DeepEqual(refs, wantRefs) {
			t.Errorf("reported %v: tokens %+v, want %+v", reported, refs, wantRefs)
		}
	}
}

// TestTwinCacheTransforms: the twin cache keeps of a provider's pod its
// name, owner and status, and of a ShadowPod its identity, origin label
// and local UID annotation; nothing the reflection reads is lost.
func TestTwinCacheTransforms(t *testing.T) {
	owner := metav1.OwnerReference{Kind: "ShadowPod", Name: "web", UID: "sp-1", Controller: ptr.To(true)}
	rp := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop-rome", UID: "p-1", OwnerReferences: []metav1.OwnerReference{owner},
		Labels: map[string]string{"app": "web", consts.ManagedByLabel: consts.ManagedByValue}, Annotations: map[string]string{"a": "b"},
		ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "kwok"}}},
		Spec: testPod("shop", "web").Spec, Status: corev1.PodStatus{Phase: corev1.PodRunning, PodIP: "10.0.0.7"}}
	out, err := remotePodStatusOnly(rp.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	got := out.(*corev1.Pod)
	want := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "shop-rome", UID: "p-1", OwnerReferences: []metav1.OwnerReference{owner}},
		Status: rp.Status}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Errorf("remote pod cached as %+v, want %+v", got, want)
	}

	sp := shadowPodMetadata()
	sp.Name, sp.UID, sp.DeletionTimestamp = "web", "sp-1", &metav1.Time{}
	sp.Labels = map[string]string{"app": "web", consts.OriginClusterIDLabel: "rome"}
	sp.Annotations = map[string]string{forge.LocalUIDAnnotation: "l-1", "note": "x"}
	sp.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "rome"}}
	out, err = shadowPodOrigin(sp.DeepCopy())
	if err != nil {
		t.Fatal(err)
	}
	gotSP := out.(*metav1.PartialObjectMetadata)
	wantSP := sp.DeepCopy()
	wantSP.ManagedFields = nil
	wantSP.Labels = map[string]string{consts.OriginClusterIDLabel: "rome"}
	wantSP.Annotations = map[string]string{forge.LocalUIDAnnotation: "l-1"}
	if !equality.Semantic.DeepEqual(gotSP, wantSP) {
		t.Errorf("ShadowPod cached as %+v, want %+v", gotSP, wantSP)
	}
	// A ShadowPod without them (not ours) keeps neither map.
	bare := shadowPodMetadata()
	bare.Labels, bare.Annotations = map[string]string{"app": "web"}, map[string]string{"note": "x"}
	if out, _ := shadowPodOrigin(bare); out.(*metav1.PartialObjectMetadata).Labels != nil || out.(*metav1.PartialObjectMetadata).Annotations != nil {
		t.Errorf("a foreign ShadowPod kept %+v", out)
	}
}
