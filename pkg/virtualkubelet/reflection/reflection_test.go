package reflection

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/test/harness"
)

// offload creates a local namespace, its twin on the provider, and the
// NamespaceMap entry saying the provider accepted it, as the offloading
// controllers would. It returns the twin's name.
func offload(ctx context.Context, t *testing.T, ns string) string {
	t.Helper()
	twin := ns + "-" + consumerID
	for _, c := range []struct {
		cl   client.Client
		name string
	}{{consumer, ns}, {provider, twin}} {
		if err := c.cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.name}}); err != nil {
			t.Fatal(err)
		}
	}
	setMapping(ctx, t, ns, twin)
	return twin
}

// setMapping sets (twin != "") or removes the entry of ns in the map.
func setMapping(ctx context.Context, t *testing.T, ns, twin string) {
	t.Helper()
	setMappingOf(ctx, t, providerID, ns, twin)
}

// setMappingOf is setMapping in the map of another provider.
func setMappingOf(ctx context.Context, t *testing.T, provider, ns, twin string) {
	t.Helper()
	if twin != "" {
		selectProvider(ctx, t, ns, provider)
	}
	writeMapping(ctx, t, provider, ns, twin)
}

// writeMapping is setMappingOf without the NamespaceOffloading: the map
// alone, as a hostile writer would leave it.
func writeMapping(ctx context.Context, t *testing.T, provider, ns, twin string) {
	t.Helper()
	key := consts.NamespaceMapKey(provider)
	var m offv1beta1.NamespaceMap
	if err := consumer.Get(ctx, key, &m); apierrors.IsNotFound(err) {
		m = offv1beta1.NamespaceMap{ObjectMeta: metav1.ObjectMeta{Name: key.Name, Namespace: key.Namespace}}
		if err := consumer.Create(ctx, &m); err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	if m.Spec.DesiredMapping == nil {
		m.Spec.DesiredMapping = map[string]string{}
	}
	if m.Status.CurrentMapping == nil {
		m.Status.CurrentMapping = map[string]offv1beta1.RemoteNamespaceStatus{}
	}
	if twin == "" {
		delete(m.Spec.DesiredMapping, ns)
		delete(m.Status.CurrentMapping, ns)
	} else {
		m.Spec.DesiredMapping[ns] = twin
		m.Status.CurrentMapping[ns] = offv1beta1.RemoteNamespaceStatus{RemoteNamespace: twin, Phase: offv1beta1.MappingAccepted}
	}
	status := m.Status
	if err := consumer.Update(ctx, &m); err != nil {
		t.Fatal(err)
	}
	m.Status = status
	if err := consumer.Status().Update(ctx, &m); err != nil {
		t.Fatal(err)
	}
}

// selectProvider makes the NamespaceOffloading of ns say, as the offloading
// controller would, that it selects provider: the reflection reflects only
// the namespaces this cluster asked the provider for.
func selectProvider(ctx context.Context, t *testing.T, ns, provider string) {
	t.Helper()
	nsof := &offv1beta1.NamespaceOffloading{ObjectMeta: metav1.ObjectMeta{Name: offv1beta1.NamespaceOffloadingName, Namespace: ns}}
	if err := consumer.Create(ctx, nsof); apierrors.IsAlreadyExists(err) {
		if err := consumer.Get(ctx, client.ObjectKeyFromObject(nsof), nsof); err != nil {
			t.Fatal(err)
		}
	} else if err != nil {
		t.Fatal(err)
	}
	if askedHere(nsof, provider) {
		return
	}
	if nsof.Status.RemoteNamespacesConditions == nil {
		nsof.Status.RemoteNamespacesConditions = map[string]offv1beta1.RemoteNamespaceConditions{}
	}
	nsof.Status.RemoteNamespacesConditions[provider] = offv1beta1.RemoteNamespaceConditions{{
		Type: offv1beta1.NamespaceOffloadingRequired, Status: corev1.ConditionTrue, Reason: "ClusterSelected"}}
	if err := consumer.Status().Update(ctx, nsof); err != nil {
		t.Fatal(err)
	}
}

func testPod(ns, name string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": name}},
		Spec: corev1.PodSpec{
			NodeName: vnodeName,
			Tolerations: []corev1.Toleration{{Key: consts.VirtualNodeTaintKey, Operator: corev1.TolerationOpExists,
				Effect: corev1.TaintEffectNoExecute}},
			Containers: []corev1.Container{{Name: "app", Image: "busybox", Command: []string{"sh", "-c", "sleep 3600"}}},
		},
	}
}

func getPod(ctx context.Context, cl client.Client, ns, name string) (*corev1.Pod, error) {
	var p corev1.Pod
	err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &p)
	return &p, err
}

// waitRunning waits until the local pod reports the remote pod Running and
// returns both.
func waitRunning(ctx context.Context, t *testing.T, ns, twin, name string) (local, remote *corev1.Pod) {
	t.Helper()
	harness.Eventually(ctx, t, "pod "+name+" Running on both sides", func() (bool, error) {
		var err error
		if remote, err = getPod(ctx, provider, twin, name); err != nil {
			return false, err
		}
		if local, err = getPod(ctx, consumer, ns, name); err != nil {
			return false, err
		}
		return remote.Status.Phase == corev1.PodRunning && local.Status.Phase == corev1.PodRunning &&
			local.Status.PodIP == remote.Status.PodIP && len(local.Status.ContainerStatuses) == 1, nil
	})
	return local, remote
}

func gone(ctx context.Context, cl client.Client, obj client.Object, ns, name string) func() (bool, error) {
	return func() (bool, error) {
		err := cl.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, obj)
		if apierrors.IsNotFound(err) {
			return true, nil
		}
		return false, err
	}
}

func TestPodLifecycle(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	twin := offload(ctx, t, "lifecycle")

	if err := consumer.Create(ctx, testPod("lifecycle", "web")); err != nil {
		t.Fatal(err)
	}
	local, remote := waitRunning(ctx, t, "lifecycle", twin, "web")
	if local.Status.HostIP != hostIP {
		t.Errorf("local host IP %q, want the virtual node's %q", local.Status.HostIP, hostIP)
	}
	if remote.Spec.NodeName == vnodeName || remote.Spec.ServiceAccountName != "default" {
		t.Errorf("remote pod scheduled on %q with service account %q: want a provider node and its default account",
			remote.Spec.NodeName, remote.Spec.ServiceAccountName)
	}
	for _, tol := range remote.Spec.Tolerations {
		if tol.Key == consts.VirtualNodeTaintKey {
			t.Errorf("the virtual-node toleration reached the provider: %v", remote.Spec.Tolerations)
		}
	}
	var sp offv1beta1.ShadowPod
	if err := provider.Get(ctx, types.NamespacedName{Namespace: twin, Name: "web"}, &sp); err != nil {
		t.Fatal(err)
	}
	if sp.Labels[consts.OriginClusterIDLabel] != consumerID || sp.Annotations[forge.LocalUIDAnnotation] != string(local.UID) {
		t.Errorf("ShadowPod metadata %v %v: want the origin and the local UID", sp.Labels, sp.Annotations)
	}

	t.Run("deleting the remote pod brings it back", func(t *testing.T) {
		// Every restart count the local pod shows from now on.
		stopWatching := harness.WatchRestarts(ctx, t, consumerCS, "lifecycle", "web")
		var again *corev1.Pod
		for want := int32(1); want <= 2; want++ {
			// A pod's start time has a one-second resolution: one that
			// lived less than that may look like its successor.
			time.Sleep(time.Until(remote.Status.StartTime.Add(1100 * time.Millisecond)))
			if err := provider.Delete(ctx, remote); err != nil {
				t.Fatal(err)
			}
			harness.Eventually(ctx, t, "a new remote pod Running", func() (bool, error) {
				p, err := getPod(ctx, provider, twin, "web")
				return err == nil && p.UID != remote.UID && p.Status.Phase == corev1.PodRunning, client.IgnoreNotFound(err)
			})
			again, remote = waitRunning(ctx, t, "lifecycle", twin, "web")
			harness.Eventually(ctx, t, "the local restart count counting the re-creation", func() (bool, error) {
				var err error
				again, err = getPod(ctx, consumer, "lifecycle", "web")
				return err == nil && len(again.Status.ContainerStatuses) == 1 && again.Status.ContainerStatuses[0].RestartCount == want, err
			})
			if got := again.Annotations[forge.RestartBaseAnnotation]; got != fmt.Sprintf("app=%d", want) {
				t.Errorf("restart base annotation %q after %d re-creations", got, want)
			}
		}
		stopWatching()
		if again.UID != local.UID {
			t.Errorf("the local pod was replaced (%s → %s); it should have stayed", local.UID, again.UID)
		}
		// The new remote pod's status was written from the cache's copy of
		// the local pod, which lacks most of its spec by then
		// (localPodCached): the stored spec must be whole.
		if !equality.Semantic.DeepEqual(again.Spec.Containers, local.Spec.Containers) || len(again.Spec.Tolerations) != len(local.Spec.Tolerations) {
			t.Errorf("the local pod's spec changed with its status: containers %+v, tolerations %v", again.Spec.Containers, again.Spec.Tolerations)
		}
	})

	t.Run("deleting the local pod removes the remote one", func(t *testing.T) {
		if err := consumer.Delete(ctx, local); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "ShadowPod gone", gone(ctx, provider, &offv1beta1.ShadowPod{}, twin, "web"))
		harness.Eventually(ctx, t, "remote pod gone", gone(ctx, provider, &corev1.Pod{}, twin, "web"))
		harness.Eventually(ctx, t, "local pod gone", gone(ctx, consumer, &corev1.Pod{}, "lifecycle", "web"))
	})

	t.Run("deleting the ShadowPod on the provider deletes the local pod", func(t *testing.T) {
		if err := consumer.Create(ctx, testPod("lifecycle", "evicted")); err != nil {
			t.Fatal(err)
		}
		waitRunning(ctx, t, "lifecycle", twin, "evicted")
		sp := &offv1beta1.ShadowPod{ObjectMeta: metav1.ObjectMeta{Namespace: twin, Name: "evicted"}}
		if err := provider.Delete(ctx, sp); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "local pod gone", gone(ctx, consumer, &corev1.Pod{}, "lifecycle", "evicted"))
		events, err := consumerCS.CoreV1().Events("lifecycle").List(ctx, metav1.ListOptions{
			FieldSelector: fields.OneTermEqualSelector("involvedObject.name", "evicted").String()})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range events.Items {
			found = found || e.Reason == "RemotePodDeleted"
		}
		if !found {
			t.Errorf("no RemotePodDeleted event on the local pod: %v", events.Items)
		}
	})
}

func TestNotOffloaded(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := consumer.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "stray"}}); err != nil {
		t.Fatal(err)
	}
	if err := consumer.Create(ctx, testPod("stray", "lost")); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the pod Pending with reason "+forge.ReasonOffloadingBackOff, func() (bool, error) {
		p, err := getPod(ctx, consumer, "stray", "lost")
		return err == nil && p.Status.Phase == corev1.PodPending && p.Status.Reason == forge.ReasonOffloadingBackOff &&
			p.Status.Message == fmt.Sprintf("namespace stray is not offloaded to cluster %s", providerID), err
	})

	// Unoffloading a namespace deletes the pods that ran there, so that their
	// controllers create them again elsewhere.
	twin := offload(ctx, t, "unoffload")
	if err := consumer.Create(ctx, testPod("unoffload", "moving")); err != nil {
		t.Fatal(err)
	}
	waitRunning(ctx, t, "unoffload", twin, "moving")
	setMapping(ctx, t, "unoffload", "")
	harness.Eventually(ctx, t, "the local pod deleted", gone(ctx, consumer, &corev1.Pod{}, "unoffload", "moving"))
}

// TestBurst offloads many pods at once and reports how long they took to
// be Running locally; the figure is informative, the check is that all
// get there.
func TestBurst(t *testing.T) {
	const n = 100
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	twin := offload(ctx, t, "burst")
	start := time.Now()
	for i := range n {
		if err := consumer.Create(ctx, testPod("burst", fmt.Sprintf("p%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	harness.Eventually(ctx, t, fmt.Sprintf("%d local pods Running", n), func() (bool, error) {
		var list corev1.PodList
		if err := consumer.List(ctx, &list, client.InNamespace("burst")); err != nil {
			return false, err
		}
		running := 0
		for _, p := range list.Items {
			if p.Status.Phase == corev1.PodRunning {
				running++
			}
		}
		return running == n, nil
	})
	t.Logf("%d pods Running locally %.2fs after the first was created", n, time.Since(start).Seconds())
	var sps offv1beta1.ShadowPodList
	if err := provider.List(ctx, &sps, client.InNamespace(twin)); err != nil {
		t.Fatal(err)
	}
	if len(sps.Items) != n {
		t.Errorf("%d ShadowPods on the provider, want %d", len(sps.Items), n)
	}

	// Deleting them all, as a ReplicaSet scaled to zero would: each local
	// pod is deleted once more by the virtual kubelet when its remote pod
	// is gone, and only once, although several events of the ShadowPod and
	// the remote pod wake it before its own deletion reaches the cache
	// (before deletedLocal, one pod in three was deleted twice: a 404).
	notFound := map[string]string{"verb": "DELETE", "resource": "pods", "code": "404"}
	before, err := harness.Requests(ctx, consumerCS, notFound)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if err := consumer.Delete(ctx, testPod("burst", fmt.Sprintf("p%03d", i))); err != nil {
			t.Fatal(err)
		}
	}
	harness.Eventually(ctx, t, "every local pod gone", func() (bool, error) {
		var list corev1.PodList
		err := consumer.List(ctx, &list, client.InNamespace("burst"))
		return err == nil && len(list.Items) == 0, err
	})
	after, err := harness.Requests(ctx, consumerCS, notFound)
	if err != nil {
		t.Fatal(err)
	}
	if after-before > 0 {
		t.Errorf("%.0f DELETEs of local pods answered 404 while deleting %d: pods deleted again after they were gone", after-before, n)
	}
}
