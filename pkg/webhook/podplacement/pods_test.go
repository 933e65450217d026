package podplacement_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
	"github.com/liqo-go/liqo/pkg/webhook/podplacement"
)

// warningRecorder keeps the warnings the API server returns.
type warningRecorder struct {
	mu   sync.Mutex
	seen []string
}

func (w *warningRecorder) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warningRecorder) reset() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = nil
}

func (w *warningRecorder) all() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strings.Join(w.seen, "\n")
}

// withWarnings is a clientset whose warnings land in the recorder, as
// kubectl prints them.
func withWarnings() (kubernetes.Interface, *warningRecorder) {
	cfg := rest.CopyConfig(webhooktest.Cluster.Config)
	w := &warningRecorder{}
	cfg.WarningHandler = w
	return kubernetes.NewForConfigOrDie(cfg), w
}

// testOffloadPod is seed 003's pod for the virtual node.
func testOffloadPod(ns string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "test-offload", Namespace: ns},
		Spec: corev1.PodSpec{
			NodeSelector: map[string]string{consts.TypeLabel: consts.TypeVirtualNode},
			Tolerations:  []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute}},
			Containers:   []corev1.Container{{Name: "app", Image: "busybox", Command: []string{"sh", "-c", "sleep 3600"}}},
		}}
}

func TestPodPlacement(t *testing.T) {
	ctx := context.Background()
	southTerm := webhooktest.Term(webhooktest.South)
	tests := []struct {
		ns          string
		spec        offv1beta1.NamespaceOffloadingSpec
		pod         func(ns string) *corev1.Pod
		tolerations []corev1.Toleration
		terms       []corev1.NodeSelectorTerm
	}{
		{"place-lar", offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.LocalAndRemotePodOffloadingStrategy},
			webhooktest.PlainPod, []corev1.Toleration{podplacement.VirtualNodeToleration()}, nil},
		{"place-lar-selector", offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.LocalAndRemotePodOffloadingStrategy,
			ClusterSelector: corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{southTerm}}},
			webhooktest.PlainPod, []corev1.Toleration{podplacement.VirtualNodeToleration()}, []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.NotVirtual), webhooktest.Term(webhooktest.South, webhooktest.IsVirtual)}},
		{"place-remote", offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.RemotePodOffloadingStrategy},
			webhooktest.PlainPod, []corev1.Toleration{podplacement.VirtualNodeToleration()}, []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.IsVirtual)}},
		{"place-remote-selector", offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.RemotePodOffloadingStrategy,
			ClusterSelector: corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{southTerm}}},
			webhooktest.PlainPod, []corev1.Toleration{podplacement.VirtualNodeToleration()}, []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.South, webhooktest.IsVirtual)}},
		{"place-local", offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.LocalPodOffloadingStrategy},
			webhooktest.PlainPod, nil, []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.NotVirtual)}},
		// Seed 003: the manifest's empty selector and the test-offload pod,
		// which keeps its single podplacement.VirtualNodeToleration().
		{"place-seed", offv1beta1.NamespaceOffloadingSpec{NamespaceMappingStrategy: offv1beta1.DefaultNameMappingStrategy,
			PodOffloadingStrategy: offv1beta1.LocalAndRemotePodOffloadingStrategy,
			ClusterSelector:       corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{}}},
			testOffloadPod, []corev1.Toleration{webhooktest.SeedToleration}, nil},
		// No strategy given: the CRD defaults it to LocalAndRemote.
		{"place-default", offv1beta1.NamespaceOffloadingSpec{}, webhooktest.PlainPod, []corev1.Toleration{podplacement.VirtualNodeToleration()}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.ns, func(t *testing.T) {
			webhooktest.OffloadedNamespace(t, tt.ns, tt.spec)
			pod := tt.pod(tt.ns)
			if err := webhooktest.Cl.Create(ctx, pod); err != nil {
				t.Fatalf("creating the pod: %v", err)
			}
			got := &corev1.Pod{}
			if err := webhooktest.Cl.Get(ctx, client.ObjectKeyFromObject(pod), got); err != nil {
				t.Fatal(err)
			}
			// The API server adds its own not-ready/unreachable tolerations.
			var ours []corev1.Toleration
			for _, tol := range got.Spec.Tolerations {
				if !strings.HasPrefix(tol.Key, "node.kubernetes.io/") {
					ours = append(ours, tol)
				}
			}
			if !equality.Semantic.DeepEqual(ours, tt.tolerations) {
				t.Errorf("tolerations = %+v, want %+v", ours, tt.tolerations)
			}
			if terms := podplacement.RequiredTerms(got); !equality.Semantic.DeepEqual(terms, tt.terms) {
				t.Errorf("required node affinity = %+v, want %+v", terms, tt.terms)
			}
			if !equality.Semantic.DeepEqual(got.Spec.NodeSelector, pod.Spec.NodeSelector) {
				t.Errorf("nodeSelector = %v, want %v", got.Spec.NodeSelector, pod.Spec.NodeSelector)
			}
		})
	}
}

// TestPodConflict: a pod whose nodeSelector asks for a virtual node in a
// Local namespace is admitted, and the user sees why it stays Pending: a
// warning at creation, an Event in `kubectl describe pod`.
func TestPodConflict(t *testing.T) {
	ctx := context.Background()
	webhooktest.OffloadedNamespace(t, "conflict", offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.LocalPodOffloadingStrategy})
	cs, warnings := withWarnings()
	pod, err := cs.CoreV1().Pods("conflict").Create(ctx, testOffloadPod("conflict"), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("the contradicting pod was refused: %v", err)
	}
	if w := warnings.all(); !strings.Contains(w, "Local pod offloading strategy") || !strings.Contains(w, "stay Pending") {
		t.Errorf("warnings = %q, want the conflict with the Local strategy", w)
	}
	if !strings.Contains(pod.Annotations[podplacement.ConflictAnnotation], "Local") {
		t.Errorf("annotation %s = %q", podplacement.ConflictAnnotation, pod.Annotations[podplacement.ConflictAnnotation])
	}

	// kubectl describe lists the Events whose involvedObject.uid is the pod's.
	byUID := fields.OneTermEqualSelector("involvedObject.uid", string(pod.UID)).String()
	webhooktest.Eventually(t, "the conflict Event on the pod", func(ctx context.Context) (bool, error) {
		events, err := cs.CoreV1().Events("conflict").List(ctx, metav1.ListOptions{FieldSelector: byUID})
		if err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.Reason == podplacement.ReasonOffloadingConflict && e.Type == corev1.EventTypeWarning && strings.Contains(e.Message, "Local") {
				return true, nil
			}
		}
		return false, nil
	})
	webhooktest.Eventually(t, "the conflict label removed once reported", func(ctx context.Context) (bool, error) {
		got, err := cs.CoreV1().Pods("conflict").Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		_, marked := got.Labels[podplacement.ConflictLabel]
		return !marked && got.Annotations[podplacement.ConflictAnnotation] != "", nil
	})

	// A pod that fits the strategy raises nothing.
	warnings.reset()
	if _, err := cs.CoreV1().Pods("conflict").Create(ctx, webhooktest.PlainPod("conflict"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if w := warnings.all(); w != "" {
		t.Errorf("a fitting pod got warnings: %q", w)
	}
}

// TestPodWithoutNamespaceOffloading: as documented, labelling a namespace
// ahead of its NamespaceOffloading refuses pods until it exists.
func TestPodWithoutNamespaceOffloading(t *testing.T) {
	ctx := context.Background()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "early", Labels: map[string]string{consts.SchedulingEnabledLabel: "true"}}}
	if err := webhooktest.Cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	err := webhooktest.Cl.Create(ctx, webhooktest.PlainPod("early"))
	if err == nil || !strings.Contains(err.Error(), `admission webhook "pod.mutate.liqo.io" denied the request`) ||
		!strings.Contains(err.Error(), "no NamespaceOffloading") {
		t.Fatalf("pod in a labelled namespace without NamespaceOffloading: err = %v", err)
	}
	nsof := &offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Name: offv1beta1.NamespaceOffloadingName, Namespace: "early"},
		Spec: offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.RemotePodOffloadingStrategy}}
	if err := webhooktest.Cl.Create(ctx, nsof); err != nil {
		t.Fatal(err)
	}
	pod := webhooktest.PlainPod("early")
	if err := webhooktest.Cl.Create(ctx, pod); err != nil {
		t.Fatalf("the pod was refused once the NamespaceOffloading existed: %v", err)
	}
	if terms := podplacement.RequiredTerms(pod); !equality.Semantic.DeepEqual(terms, []corev1.NodeSelectorTerm{webhooktest.Term(webhooktest.IsVirtual)}) {
		t.Errorf("the pod was not placed Remote: %+v", terms)
	}
}

// TestPodWhileUnoffloading: pods created while the NamespaceOffloading is
// being deleted stay local, as the documentation says unoffloaded pods do.
func TestPodWhileUnoffloading(t *testing.T) {
	ctx := context.Background()
	webhooktest.OffloadedNamespace(t, "leaving", offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.RemotePodOffloadingStrategy})
	nsof := &offv1beta1.NamespaceOffloading{}
	key := client.ObjectKey{Namespace: "leaving", Name: offv1beta1.NamespaceOffloadingName}
	if err := webhooktest.Cl.Get(ctx, key, nsof); err != nil {
		t.Fatal(err)
	}
	nsof.Finalizers = []string{"test.liqo.io/hold"}
	if err := webhooktest.Cl.Update(ctx, nsof); err != nil {
		t.Fatal(err)
	}
	if err := webhooktest.Cl.Delete(ctx, nsof); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := webhooktest.Cl.Get(ctx, key, nsof); err == nil {
			nsof.Finalizers = nil
			_ = webhooktest.Cl.Update(ctx, nsof)
		}
	})
	pod := webhooktest.PlainPod("leaving")
	pod.Name, pod.GenerateName = "", "app-"
	webhooktest.Eventually(t, "a pod admitted unchanged during unoffloading", func(ctx context.Context) (bool, error) {
		p := pod.DeepCopy()
		if err := webhooktest.Cl.Create(ctx, p); err != nil {
			return false, err
		}
		if podplacement.RequiredTerms(p) == nil {
			return true, nil
		}
		// The cache had not seen the deletion yet: try again.
		return false, webhooktest.Cl.Delete(ctx, p, client.GracePeriodSeconds(0))
	})
}

// TestPodOutsideOffloadedNamespaces: the webhook never sees other pods.
func TestPodOutsideOffloadedNamespaces(t *testing.T) {
	ctx := context.Background()
	if err := webhooktest.Cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "plain"}}); err != nil {
		t.Fatal(err)
	}
	pod := testOffloadPod("plain")
	if err := webhooktest.Cl.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	if pod.Spec.Affinity != nil {
		t.Errorf("a pod outside offloaded namespaces got an affinity: %+v", pod.Spec.Affinity)
	}
}

// TestNamespaceOffloadingValidation: the name and the immutable mapping are
// enforced by the CRD's validation rules, with no webhook; the pod
// offloading strategy changes in place, as the seed allows.
func TestNamespaceOffloadingValidation(t *testing.T) {
	ctx := context.Background()
	webhooktest.OffloadedNamespace(t, "rules", offv1beta1.NamespaceOffloadingSpec{PodOffloadingStrategy: offv1beta1.LocalAndRemotePodOffloadingStrategy})
	other := &offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: "rules"}}
	if err := webhooktest.Cl.Create(ctx, other); err == nil || !strings.Contains(err.Error(), "a NamespaceOffloading must be named 'offloading'") {
		t.Errorf("creating a NamespaceOffloading named other: err = %v", err)
	}
	nsof := &offv1beta1.NamespaceOffloading{}
	if err := webhooktest.Cl.Get(ctx, client.ObjectKey{Namespace: "rules", Name: offv1beta1.NamespaceOffloadingName}, nsof); err != nil {
		t.Fatal(err)
	}
	changed := nsof.DeepCopy()
	changed.Spec.NamespaceMappingStrategy = offv1beta1.EnforceSameNameMappingStrategy
	if err := webhooktest.Cl.Update(ctx, changed); err == nil || !strings.Contains(err.Error(), "namespaceMappingStrategy is immutable") {
		t.Errorf("changing namespaceMappingStrategy: err = %v", err)
	}
	nsof.Spec.PodOffloadingStrategy = offv1beta1.RemotePodOffloadingStrategy
	if err := webhooktest.Cl.Update(ctx, nsof); err != nil {
		t.Errorf("changing podOffloadingStrategy in place: %v", err)
	}
}
