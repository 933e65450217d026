package webhook

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// TestStrayGrantJudged: a consumer granted its offloading rights, by
// mistake, in a namespace that is none of its twins (or a twin that lost
// its labels) still meets the reflected objects' webhook there, which
// refuses it: the webhook selects no namespace, only consumers.
func TestStrayGrantJudged(t *testing.T) {
	ctx := context.Background()
	stray, _ := webhooktest.ReflectingConsumer(t, "stray-hog", "app")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "provider-misgranted"}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: "mistake", Namespace: ns.Name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "liqo-remote-offloading"},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: "User", Name: consts.ConsumerUser("stray-hog")}}}
	if err := cl.Create(ctx, rb); err != nil {
		t.Fatal(err)
	}
	webhooktest.Eventually(t, "the mistaken grant", func(ctx context.Context) (bool, error) {
		err := stray.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns.Name))
		return err == nil, err
	})
	webhooktest.WantReflectedDenied(t, "a ConfigMap outside the consumer's twins", stray.Create(ctx, webhooktest.Blob("planted", ns.Name, "stray-hog", 1<<10)),
		"consumer stray-hog may not write configmaps in namespace provider-misgranted, which is not one of its twin namespaces")
}

// TestWebhooksFailClosed stops the webhook server, as a crashed manager
// would leave it: every write a consumer makes with its own credentials
// (a reflected object, a ShadowPod, a replica or an Event in its tenant
// namespace) is refused, so that no check and no budget is skipped; the cluster's own
// writes, in the consumer's twin and elsewhere, still pass. A new manager
// then serves again.
func TestWebhooksFailClosed(t *testing.T) {
	ctx := context.Background()
	down, twins := webhooktest.ReflectingConsumer(t, "down-hog", "app")
	webhooktest.RemoteControlPlane(t, "down-hog")
	if err := down.Create(ctx, webhooktest.Blob("before", twins[0], "down-hog", 1<<10)); err != nil {
		t.Fatalf("a consumer's ConfigMap while the webhooks run: %v", err)
	}

	running.Stop()
	defer func() {
		next, err := startManager(cluster.Config, mainOptions())
		if err != nil {
			t.Fatalf("restarting the manager: %v", err)
		}
		running = next
	}()

	refused := func(what, webhook string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), `failed calling webhook "`+webhook+`"`) {
			t.Errorf("%s with the webhooks down: err = %v, want the API server failing to call %s", what, err, webhook)
		}
	}
	refused("a consumer's ConfigMap", ReflectedWebhookName, down.Create(ctx, webhooktest.Blob("after", twins[0], "down-hog", 1<<10)))
	refused("a consumer's Secret", ReflectedWebhookName, down.Create(ctx, &corev1.Secret{
		ObjectMeta: webhooktest.ReflectedConfigMap("after", twins[0], "down-hog").ObjectMeta, Data: map[string][]byte{"k": []byte("v")}}))
	refused("a consumer's ShadowEndpointSlice", ReflectedWebhookName, down.Create(ctx, webhooktest.ReflectedSlice("after", twins[0], "down-hog")))
	refused("a consumer's ShadowPod", ShadowPodWebhookName, down.Create(ctx, webhooktest.ShadowPod("after", twins[0], "down-hog", "", "")))
	refused("a consumer's ResourceSlice", ReplicaWebhookName, down.Create(ctx, webhooktest.ReplicaSlice("after", "down-hog")))
	tenant := consts.TenantNamespace("down-hog")
	refused("a consumer's Event", EventWebhookName, down.Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "after", Namespace: tenant},
		InvolvedObject: corev1.ObjectReference{Kind: "ResourceSlice", Namespace: tenant, Name: "after"}, Reason: "Down", Message: "down"}))
	grown := webhooktest.Blob("before", twins[0], "down-hog", 64<<10)
	var before corev1.ConfigMap
	if err := down.Get(ctx, client.ObjectKeyFromObject(grown), &before); err != nil {
		t.Fatal(err)
	}
	grown.ResourceVersion = before.ResourceVersion
	refused("a consumer's ConfigMap grown", ReflectedWebhookName, down.Update(ctx, grown))

	// The cluster's own writes never wait on the webhooks.
	for _, ns := range []string{twins[0], metav1.NamespaceDefault} {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "provider-own-while-down", Namespace: ns}}
		if err := cl.Create(ctx, cm); err != nil {
			t.Errorf("the provider's own ConfigMap in %s with the webhooks down: %v", ns, err)
		}
	}
}
