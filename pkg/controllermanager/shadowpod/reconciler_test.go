package shadowpod

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/test/harness"
)

// newNamespace creates a namespace for one test and waits for its default
// ServiceAccount: before it exists the API server refuses pods.
func newNamespace(ctx context.Context, t *testing.T) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "shadowpod-"}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(context.Background(), ns) })
	harness.Eventually(ctx, t, "the default ServiceAccount", func() (bool, error) {
		err := cl.Get(ctx, types.NamespacedName{Namespace: ns.Name, Name: "default"}, &corev1.ServiceAccount{})
		return err == nil, client.IgnoreNotFound(err)
	})
	return ns.Name
}

func newShadowPod(ns, name string) *offv1beta1.ShadowPod {
	return &offv1beta1.ShadowPod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: offv1beta1.ShadowPodSpec{Pod: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "busybox", Command: []string{"sleep", "infinity"}}},
		}},
	}
}

func running(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodRunning && p.Status.PodIP != "" && p.DeletionTimestamp.IsZero()
}

// ready tells whether a ShadowPod's status shows a Running, Ready pod.
func ready(sp *offv1beta1.ShadowPod) bool {
	return sp.Status.Phase == corev1.PodRunning && meta.IsStatusConditionTrue(sp.Status.Conditions, ConditionReady)
}

// waitPod waits until the Pod of sp runs and satisfies more, returning it.
func waitPod(ctx context.Context, t *testing.T, sp *offv1beta1.ShadowPod, what string, more func(*corev1.Pod) bool) *corev1.Pod {
	t.Helper()
	var pod corev1.Pod
	harness.Eventually(ctx, t, "pod "+sp.Name+" Running"+what, func() (bool, error) {
		err := cl.Get(ctx, client.ObjectKeyFromObject(sp), &pod)
		return err == nil && running(&pod) && (more == nil || more(&pod)), client.IgnoreNotFound(err)
	})
	return &pod
}

// waitStatus waits until the ShadowPod's status satisfies cond.
func waitStatus(ctx context.Context, t *testing.T, sp *offv1beta1.ShadowPod, what string, cond func(*offv1beta1.ShadowPod) bool) {
	t.Helper()
	harness.Eventually(ctx, t, "ShadowPod "+sp.Name+" "+what, func() (bool, error) {
		var got offv1beta1.ShadowPod
		if err := cl.Get(ctx, client.ObjectKeyFromObject(sp), &got); err != nil {
			return false, err
		}
		return cond(&got), nil
	})
}

func hasCondition(reason string) func(*offv1beta1.ShadowPod) bool {
	return func(sp *offv1beta1.ShadowPod) bool {
		c := meta.FindStatusCondition(sp.Status.Conditions, ConditionReady)
		return c != nil && c.Status == metav1.ConditionFalse && c.Reason == reason && sp.Status.Phase == corev1.PodPending
	}
}

// waitEvent waits for an Event of the given reason about the ShadowPod.
func waitEvent(ctx context.Context, t *testing.T, sp *offv1beta1.ShadowPod, eventType, reason string) {
	t.Helper()
	harness.Eventually(ctx, t, fmt.Sprintf("a %s event %s on %s", eventType, reason, sp.Name), func() (bool, error) {
		n, err := countEvents(ctx, sp, reason)
		return n > 0, err
	})
	var events corev1.EventList
	if err := cl.List(ctx, &events, client.InNamespace(sp.Namespace)); err != nil {
		t.Fatal(err)
	}
	for _, e := range events.Items {
		if e.InvolvedObject.Name == sp.Name && e.Reason == reason && e.Type != eventType {
			t.Errorf("event %s is of type %s, want %s", reason, e.Type, eventType)
		}
	}
}

// countEvents counts the occurrences of an Event reason about the
// ShadowPod, aggregated ones included.
func countEvents(ctx context.Context, sp *offv1beta1.ShadowPod, reason string) (int, error) {
	var events corev1.EventList
	if err := cl.List(ctx, &events, client.InNamespace(sp.Namespace)); err != nil {
		return 0, err
	}
	n := 0
	for _, e := range events.Items {
		if e.InvolvedObject.Kind == "ShadowPod" && e.InvolvedObject.Name == sp.Name &&
			e.InvolvedObject.UID == sp.UID && e.Reason == reason {
			n += max(int(e.Count), 1)
		}
	}
	return n, nil
}

// runningShadowPod creates sp and waits until its Pod runs and its status
// shows it Ready.
func runningShadowPod(ctx context.Context, t *testing.T, sp *offv1beta1.ShadowPod) *corev1.Pod {
	t.Helper()
	if err := cl.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(ctx, t, sp, "", nil)
	waitStatus(ctx, t, sp, "Running and Ready", ready)
	return pod
}

func TestCreatesPod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(ctx, t)
	sp := newShadowPod(ns, "web")
	sp.Labels = map[string]string{"app": "web"}
	sp.Annotations = map[string]string{"example.com/note": "offloaded"}
	start := time.Now()
	pod := runningShadowPod(ctx, t, sp)
	t.Logf("pod Running and ShadowPod Ready in %s", time.Since(start).Round(time.Millisecond))

	wantLabels := map[string]string{"app": "web", consts.ManagedByLabel: consts.ManagedByValue, ShadowPodLabel: "web"}
	for k, v := range wantLabels {
		if pod.Labels[k] != v {
			t.Errorf("pod label %s = %q, want %q (labels %v)", k, pod.Labels[k], v, pod.Labels)
		}
	}
	if pod.Annotations["example.com/note"] != "offloaded" {
		t.Errorf("pod annotations %v lack the ShadowPod's", pod.Annotations)
	}
	ref := metav1.GetControllerOf(pod)
	if ref == nil || ref.UID != sp.UID || ref.Kind != "ShadowPod" || ref.BlockOwnerDeletion == nil || !*ref.BlockOwnerDeletion {
		t.Errorf("pod controller reference = %+v, want the ShadowPod (uid %s) blocking owner deletion", ref, sp.UID)
	}
	if pod.Spec.NodeName == "" || pod.Spec.Containers[0].Image != "busybox" {
		t.Errorf("pod spec: node %q, image %q", pod.Spec.NodeName, pod.Spec.Containers[0].Image)
	}
	// A first creation records no Event (a write per pod); only a
	// recreation does.
	if n, err := countEvents(ctx, sp, EventPodRecreated); err != nil || n != 0 {
		t.Errorf("%d PodRecreated events (%v), want none", n, err)
	}
	t.Logf("writes of the controller in the namespace: %v", writes.in(ns))
}

func TestRecreatesDeletedPod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(ctx, t)
	sp := newShadowPod(ns, "db")
	old := runningShadowPod(ctx, t, sp)

	start := time.Now()
	// At once (grace 0): a graceful deletion leaves the removal to kwok,
	// which deletes by name without a UID precondition and sometimes twice,
	// so that its late second delete can take the new pod as well (seen
	// under load: two recreations). A kubelet deletes with the pod's UID.
	if err := cl.Delete(ctx, old, client.GracePeriodSeconds(0)); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(ctx, t, sp, " with a new UID", func(p *corev1.Pod) bool { return p.UID != old.UID })
	t.Logf("pod recreated and Running in %s", time.Since(start).Round(time.Millisecond))
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != sp.UID {
		t.Errorf("recreated pod controller reference = %+v, want the ShadowPod", ref)
	}
	waitEvent(ctx, t, sp, corev1.EventTypeNormal, EventPodRecreated)
	waitStatus(ctx, t, sp, "Running and Ready again", ready)
	if n, err := countEvents(ctx, sp, EventPodRecreated); err != nil || n != 1 {
		t.Errorf("%d PodRecreated events (%v), want 1", n, err)
	}
}

func TestDeletingShadowPodDeletesPod(t *testing.T) {
	for _, policy := range []metav1.DeletionPropagation{metav1.DeletePropagationBackground, metav1.DeletePropagationForeground} {
		t.Run(string(policy), func(t *testing.T) {
			// The garbage collector of kube-controller-manager only learns of
			// a new CRD at its next discovery resync, every 30 seconds: the
			// first deletion after the CRDs are installed may wait for it.
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			ns := newNamespace(ctx, t)
			sp := newShadowPod(ns, "job")
			pod := runningShadowPod(ctx, t, sp)

			start := time.Now()
			if err := cl.Delete(ctx, sp, client.PropagationPolicy(policy)); err != nil {
				t.Fatal(err)
			}
			// In the foreground the ShadowPod waits, terminating, for its Pod
			// to go: the controller must not bring the Pod back meanwhile.
			harness.Eventually(ctx, t, "the pod and the ShadowPod gone", func() (bool, error) {
				perr := cl.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{})
				serr := cl.Get(ctx, client.ObjectKeyFromObject(sp), &offv1beta1.ShadowPod{})
				return apierrors.IsNotFound(perr) && apierrors.IsNotFound(serr), nil
			})
			t.Logf("pod garbage-collected in %s", time.Since(start).Round(time.Millisecond))
			time.Sleep(2 * time.Second)
			if err := cl.Get(ctx, client.ObjectKeyFromObject(pod), &corev1.Pod{}); !apierrors.IsNotFound(err) {
				t.Errorf("the pod came back after its ShadowPod was deleted (get: %v)", err)
			}
			if n, err := countEvents(ctx, sp, EventPodRecreated); err != nil || n != 0 {
				t.Errorf("%d PodRecreated events (%v), want none", n, err)
			}
		})
	}
}

func TestNameConflict(t *testing.T) {
	tests := []struct {
		name   string
		labels map[string]string
	}{
		// Outside the manager's Pod cache: only the failed create sees it.
		{"pod of someone else", map[string]string{"app": "theirs"}},
		// In the cache, but controlled by no ShadowPod.
		{"pod with our managed-by label", map[string]string{consts.ManagedByLabel: consts.ManagedByValue}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			ns := newNamespace(ctx, t)
			sp := newShadowPod(ns, "taken")
			theirs := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: sp.Name, Namespace: ns, Labels: tt.labels},
				Spec: *sp.Spec.Pod.DeepCopy()}
			if err := cl.Create(ctx, theirs); err != nil {
				t.Fatal(err)
			}
			if err := cl.Create(ctx, sp); err != nil {
				t.Fatal(err)
			}
			waitStatus(ctx, t, sp, "Ready False NameConflict", hasCondition(ReasonNameConflict))
			waitEvent(ctx, t, sp, corev1.EventTypeWarning, EventNameConflict)

			var got corev1.Pod
			if err := cl.Get(ctx, client.ObjectKeyFromObject(theirs), &got); err != nil {
				t.Fatal(err)
			}
			if got.UID != theirs.UID || len(got.OwnerReferences) != 0 || len(got.Labels) != len(tt.labels) {
				t.Errorf("the other pod was touched: uid %s (was %s), owners %v, labels %v", got.UID, theirs.UID,
					got.OwnerReferences, got.Labels)
			}
			if n := writes.in(ns)["POST events"]; n != 1 {
				t.Errorf("%d events written, want one NameConflict only", n)
			}
		})
	}
}

// TestReplacedShadowPod replaces a ShadowPod by one of the same name, as a
// consumer does when it recreates a pod: the old Pod, still there until the
// garbage collector removes it, is not the new ShadowPod's, and the new one
// gets its own Pod once the old one is gone.
func TestReplacedShadowPod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(ctx, t)
	first := newShadowPod(ns, "app-0")
	old := runningShadowPod(ctx, t, first)
	if err := cl.Delete(ctx, first); err != nil {
		t.Fatal(err)
	}
	second := newShadowPod(ns, "app-0")
	second.Spec.Pod.Containers[0].Image = "busybox:1.37"
	if err := cl.Create(ctx, second); err != nil {
		t.Fatal(err)
	}
	pod := waitPod(ctx, t, second, " for the new ShadowPod", func(p *corev1.Pod) bool { return p.UID != old.UID })
	if ref := metav1.GetControllerOf(pod); ref == nil || ref.UID != second.UID || pod.Spec.Containers[0].Image != "busybox:1.37" {
		t.Errorf("pod controlled by %+v with image %s, want the new ShadowPod's", ref, pod.Spec.Containers[0].Image)
	}
	waitStatus(ctx, t, second, "Running and Ready", ready)
}

// TestCreationFailed gives a ShadowPod a spec the API server refuses for a
// pod, then fixes it.
func TestCreationFailed(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(ctx, t)
	sp := newShadowPod(ns, "bad")
	sp.Spec.Pod.Containers[0].Name = "Not_A_DNS_Label"
	if err := cl.Create(ctx, sp); err != nil {
		t.Fatal(err)
	}
	waitStatus(ctx, t, sp, "Ready False PodCreationFailed", hasCondition(ReasonCreationFailed))
	waitEvent(ctx, t, sp, corev1.EventTypeWarning, EventCreationFailed)
	// An invalid spec is not retried: only a new one can succeed. The
	// reconcile that the status write itself brings tries once more.
	time.Sleep(time.Second)
	n := writes.in(ns)["POST pods"]
	time.Sleep(2 * time.Second)
	if m := writes.in(ns)["POST pods"]; n > 2 || m != n {
		t.Errorf("%d pod creations attempted, then %d: want at most 2, and no more later", n, m)
	}

	if err := cl.Get(ctx, client.ObjectKeyFromObject(sp), sp); err != nil {
		t.Fatal(err)
	}
	sp.Spec.Pod.Containers[0].Name = "main"
	if err := cl.Update(ctx, sp); err != nil {
		t.Fatal(err)
	}
	waitPod(ctx, t, sp, " after the fix", nil)
	waitStatus(ctx, t, sp, "Running and Ready", ready)
}

// TestRestoresLabels removes our labels from a running Pod, which takes it
// out of the manager's cache: the controller finds it by its failed create
// and puts the labels back, without replacing the Pod.
func TestRestoresLabels(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ns := newNamespace(ctx, t)
	sp := newShadowPod(ns, "relabel")
	pod := runningShadowPod(ctx, t, sp)
	patch := client.MergeFrom(pod.DeepCopy())
	delete(pod.Labels, consts.ManagedByLabel)
	if err := cl.Patch(ctx, pod, patch); err != nil {
		t.Fatal(err)
	}
	waitPod(ctx, t, sp, " with its labels back", func(p *corev1.Pod) bool {
		return p.Labels[consts.ManagedByLabel] == consts.ManagedByValue
	})
	waitEvent(ctx, t, sp, corev1.EventTypeNormal, EventLabelsRestored)
	var got corev1.Pod
	if err := cl.Get(ctx, client.ObjectKeyFromObject(pod), &got); err != nil || got.UID != pod.UID {
		t.Errorf("the pod was replaced: uid %s, was %s (%v)", got.UID, pod.UID, err)
	}
}

// TestBurst offloads many pods at once and logs how long they take; it
// checks no timing, only that every pod runs and the writes stay few.
func TestBurst(t *testing.T) {
	const n = 200
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	ns := newNamespace(ctx, t)

	start := time.Now()
	names := make(chan string)
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for name := range names {
				if err := cl.Create(ctx, newShadowPod(ns, name)); err != nil {
					errs <- err
				}
			}
		})
	}
	for i := range n {
		names <- fmt.Sprintf("burst-%03d", i)
	}
	close(names)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	created := time.Since(start)

	// The controller's own part ends when every pod exists; running them is
	// up to the scheduler (whose client is limited to 50 requests a second,
	// one binding per pod) and kwok.
	var podsCreated, podsRunning time.Duration
	harness.Eventually(ctx, t, fmt.Sprintf("%d Running pods", n), func() (bool, error) {
		var pods corev1.PodList
		if err := cl.List(ctx, &pods, client.InNamespace(ns)); err != nil {
			return false, err
		}
		if podsCreated == 0 && len(pods.Items) == n {
			podsCreated = time.Since(start)
		}
		k := 0
		for i := range pods.Items {
			if running(&pods.Items[i]) {
				k++
			}
		}
		podsRunning = time.Since(start)
		return k == n, nil
	})
	harness.Eventually(ctx, t, fmt.Sprintf("%d Ready ShadowPods", n), func() (bool, error) {
		var sps offv1beta1.ShadowPodList
		if err := cl.List(ctx, &sps, client.InNamespace(ns)); err != nil {
			return false, err
		}
		k := 0
		for i := range sps.Items {
			if ready(&sps.Items[i]) {
				k++
			}
		}
		return k == n, nil
	})
	allReady := time.Since(start)
	t.Logf("%d ShadowPods: created in %s; all pods created after %s, Running after %s; all ShadowPods Ready after %s",
		n, created.Round(time.Millisecond), podsCreated.Round(time.Millisecond), podsRunning.Round(time.Millisecond),
		allReady.Round(time.Millisecond))

	// Let the last events and status writes land before counting.
	time.Sleep(2 * time.Second)
	counts := writes.in(ns)
	keys := make([]string, 0, len(counts))
	total := 0
	for k, v := range counts {
		keys = append(keys, k)
		total += v
	}
	sort.Strings(keys)
	for _, k := range keys {
		t.Logf("  %-30s %5d (%.2f per ShadowPod)", k, counts[k], float64(counts[k])/n)
	}
	t.Logf("  %-30s %5d (%.2f per ShadowPod)", "total", total, float64(total)/n)
	if counts["POST pods"] < n {
		t.Errorf("%d pods created, want %d", counts["POST pods"], n)
	}
	// One create, one event and a couple of status writes each: far more
	// would be a write storm.
	if total > 5*n {
		t.Errorf("%d writes for %d ShadowPods", total, n)
	}
}
