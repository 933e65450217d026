package peering

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/teardown"
	"github.com/liqo-go/liqo/test/harness"
)

// consumerHold is the finalizer the consumer puts on its objects on the
// provider, to hold their deletion back.
const consumerHold = "rome.example.com/hold"

// TestTeardownPastConsumerFinalizers (issue 30, finding 7): rome, with its
// own credentials on milan, puts finalizers of its own on its ShadowPod, on
// a ConfigMap in its twin and on its replicated NamespaceMap. milan's
// administrator drains rome's Tenant: the ShadowPod and its pod go all the
// same once the teardown timeout passes, with an Event naming the removed
// finalizer. Then rome unpeers: its twin and its map go too.
func TestTeardownPastConsumerFinalizers(t *testing.T) {
	peer(t, "rome", "milan")
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	const ns = "teardown"
	twin := ns + "-rome"
	createNamespace(t, ns)
	if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"],
		"--selector", "liqo.io/remote-cluster-id=milan", "--pod-offloading-strategy", "Remote", "--timeout", "1m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	rome := clusterClient(t, "rome")
	milan := clusterClient(t, "milan")
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: ns},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"}}}}}
	if err := rome.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rome.Delete(context.Background(), pod) })

	// rome as milan knows it: its user and group, and only their rights.
	cfg := rest.CopyConfig(tb.Cluster("milan").Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: consts.ConsumerUser("rome"), Groups: []string{consts.ConsumerGroup}}
	asRome, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	hold := client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"finalizers":["`+consumerHold+`"]}}`))
	sp := &offv1beta1.ShadowPod{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: twin}}
	harness.Eventually(ctx, t, "rome's ShadowPod on milan, held by rome's finalizer", func() (bool, error) {
		err := asRome.Patch(ctx, sp, hold)
		return err == nil, client.IgnoreNotFound(err)
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "held", Namespace: twin, Finalizers: []string{consumerHold},
		Labels: map[string]string{consts.OriginClusterIDLabel: "rome"}}}
	if err := asRome.Create(ctx, cm); err != nil {
		t.Fatalf("rome creating a ConfigMap with a finalizer in its twin: %v", err)
	}
	var maps offv1beta1.NamespaceMapList
	if err := asRome.List(ctx, &maps, client.InNamespace(consts.TenantNamespace("rome")), client.MatchingLabels{consts.ReplicationLabel: "true"}); err != nil || len(maps.Items) == 0 {
		t.Fatalf("rome's replicated NamespaceMaps on milan: %d (%v)", len(maps.Items), err)
	}
	for i := range maps.Items {
		if err := asRome.Patch(ctx, &maps.Items[i], hold); err != nil {
			t.Fatalf("rome holding its NamespaceMap %s: %v", maps.Items[i].Name, err)
		}
	}

	admin := func(args ...string) {
		t.Helper()
		out, err := run(ctx, append(args, "--kubeconfig", kubeconfigs["milan"])...)
		if err != nil {
			t.Fatalf("liqoctl %v: %v\n%s", args, err, out)
		}
	}
	admin("drain", "tenant", "rome", "--timeout", "2m")
	t.Cleanup(func() {
		_, _ = run(context.Background(), "activate", "tenant", "rome", "--kubeconfig", kubeconfigs["milan"])
	})
	harness.Eventually(ctx, t, "the held ShadowPod and its pod gone from milan", func() (bool, error) {
		serr := milan.Get(ctx, client.ObjectKeyFromObject(sp), &offv1beta1.ShadowPod{})
		perr := milan.Get(ctx, client.ObjectKeyFromObject(sp), &corev1.Pod{})
		return apierrors.IsNotFound(serr) && apierrors.IsNotFound(perr), nil
	})
	wantEvent(ctx, t, milan, twin, "held", teardown.ReasonFinalizersRemoved, consumerHold)
	admin("activate", "tenant", "rome")

	if out, err := run(ctx, "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"]); err != nil {
		t.Fatalf("unpeer: %v\n%s", err, out)
	}
	t.Cleanup(func() { peer(t, "rome", "milan") })
	harness.Eventually(ctx, t, "rome's twin and replicated maps gone from milan", func() (bool, error) {
		var left offv1beta1.NamespaceMapList
		if err := milan.List(ctx, &left, client.InNamespace(consts.TenantNamespace("rome")), client.MatchingLabels{consts.ReplicationLabel: "true"}); err != nil {
			return false, err
		}
		err := milan.Get(ctx, client.ObjectKey{Name: twin}, &corev1.Namespace{})
		return apierrors.IsNotFound(err) && len(left.Items) == 0, client.IgnoreNotFound(err)
	})
}

// wantEvent waits for an Event of reason about object name in namespace
// whose message contains text.
func wantEvent(ctx context.Context, t *testing.T, c client.Client, namespace, name, reason, text string) {
	t.Helper()
	harness.Eventually(ctx, t, "a "+reason+" Event on "+name, func() (bool, error) {
		var events corev1.EventList
		if err := c.List(ctx, &events, client.InNamespace(namespace)); err != nil {
			return false, err
		}
		for _, e := range events.Items {
			if e.InvolvedObject.Name == name && e.Reason == reason && strings.Contains(e.Message, text) {
				t.Logf("Event %s on %s %s: %s", reason, e.InvolvedObject.Kind, name, e.Message)
				return true, nil
			}
		}
		return false, nil
	})
}
