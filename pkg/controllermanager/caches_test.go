package controllermanager

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/auth"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// TestCachesHoldNoConsumerContents runs the nonce controller in a manager
// with the production caches, on a provider with several tenants whose
// namespaces hold what a peering leaves (the nonce Secret, a gateway's
// Service) and what consumers reflect (their application Secrets,
// Services and Ingresses): the nonces are issued (the controller reads
// Secrets through the API server), the cache holds only our own Secrets,
// without a byte of their contents, and only our own Services, and of
// the Ingresses only their hosts. Before, it held every one of them whole.
func TestCachesHoldNoConsumerContents(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	tb, err := testbed.Start(ctx, testbed.Options{}, testbed.ClusterSpec{Name: "secrets"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tb.Stop)
	cfg := tb.Clusters[0].Config
	// The nonce controller watches Tenants too.
	if err := crds.Install(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	admin, err := client.New(cfg, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}

	const tenants = 4
	secret := make([]byte, 32<<10)
	reflected := func(consumer string) map[string]string {
		return map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: consumer}
	}
	port := []corev1.ServicePort{{Port: 80}}
	for i := range tenants {
		consumer := fmt.Sprintf("consumer-%d", i)
		ns := consts.TenantNamespace(consumer)
		twin := "app-" + consumer
		objs := []client.Object{
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}},
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: twin}},
			// As liqoctl peer creates it.
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: consts.NonceSecret, Namespace: ns, Labels: map[string]string{
				consts.ManagedByLabel: consts.ManagedByValue, consts.NonceSecretLabel: consts.NonceIssued, consts.RemoteClusterIDLabel: consumer}}},
			// As the consumer's reflection copies its Secrets.
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-password", Namespace: twin, Labels: map[string]string{
				consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: consumer}},
				Data: map[string][]byte{"password": secret}},
			// A gateway's Service, and the consumer's reflected one.
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "gw-" + consumer, Namespace: ns,
				Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue}}, Spec: corev1.ServiceSpec{Ports: port}},
			&corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: twin, Labels: reflected(consumer)},
				Spec: corev1.ServiceSpec{Ports: port}},
			// The consumer's Ingress, with a large annotation.
			&networkingv1.Ingress{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: twin, Labels: reflected(consumer),
				Annotations: map[string]string{"blob": string(make([]byte, 32<<10))}},
				Spec: networkingv1.IngressSpec{Rules: []networkingv1.IngressRule{{Host: consumer + ".example.com",
					IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{{
						Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: networkingv1.IngressBackend{
							Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}}}}}}}}},
			// Not ours at all, with what kubectl apply leaves.
			&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "theirs", Namespace: twin,
				Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: `{"data":{"k":"c2VjcmV0"}}`}},
				Data: map[string][]byte{"k": []byte("secret")}},
		}
		for _, o := range objs {
			if err := admin.Create(ctx, o); err != nil {
				t.Fatal(err)
			}
		}
	}
	// One of ours applied by kubectl: its contents are in an annotation.
	applied := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "applied", Namespace: consts.TenantNamespace("consumer-0"),
		Labels:      map[string]string{consts.ManagedByLabel: consts.ManagedByValue},
		Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: `{"data":{"k":"c2VjcmV0"}}`}},
		Data: map[string][]byte{"k": []byte("secret")}}
	if err := admin.Create(ctx, applied); err != nil {
		t.Fatal(err)
	}

	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:     apis.NewScheme(),
		Cache:      cache.Options{ByObject: cacheByObject()},
		Client:     clientOptions(),
		Controller: config.Controller{SkipNameValidation: ptr.To(true)},
		Metrics:    metricsserver.Options{BindAddress: "0"},
		Logger:     testbed.TestLogger(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := (&auth.NonceReconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() { _ = mgr.Start(mctx) }()

	nonces := map[string][]byte{}
	for i := range tenants {
		key := types.NamespacedName{Namespace: consts.TenantNamespace(fmt.Sprintf("consumer-%d", i)), Name: consts.NonceSecret}
		harness.Eventually(ctx, t, "the nonce of "+key.Namespace, func() (bool, error) {
			var s corev1.Secret
			if err := admin.Get(ctx, key, &s); err != nil {
				return false, err
			}
			nonces[key.Namespace] = s.Data[consts.NonceKey]
			return len(s.Data[consts.NonceKey]) == 64, nil
		})
		// The manager's client reads the contents from the API server.
		var s corev1.Secret
		if err := mgr.GetClient().Get(ctx, key, &s); err != nil || !bytes.Equal(s.Data[consts.NonceKey], nonces[key.Namespace]) {
			t.Errorf("the manager's client read nonce %s/%s as %x (%v), want the issued one", key.Namespace, key.Name, s.Data[consts.NonceKey], err)
		}
	}

	var cached corev1.SecretList
	if err := mgr.GetCache().List(ctx, &cached); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range cached.Items {
		got[s.Namespace+"/"+s.Name] = true
		if len(s.Data) > 0 || len(s.StringData) > 0 || s.Annotations[corev1.LastAppliedConfigAnnotation] != "" {
			t.Errorf("the cache holds the contents of Secret %s/%s: %d data keys, annotations %v", s.Namespace, s.Name, len(s.Data), s.Annotations)
		}
	}
	want := map[string]bool{consts.TenantNamespace("consumer-0") + "/applied": true}
	for ns := range nonces {
		want[ns+"/"+consts.NonceSecret] = true
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("the cache holds Secrets %v, want only our own: %v", got, want)
	}

	var services corev1.ServiceList
	if err := mgr.GetCache().List(ctx, &services); err != nil {
		t.Fatal(err)
	}
	gotServices := map[string]bool{}
	for _, s := range services.Items {
		gotServices[s.Namespace+"/"+s.Name] = true
	}
	wantServices := map[string]bool{}
	for i := range tenants {
		consumer := fmt.Sprintf("consumer-%d", i)
		wantServices[consts.TenantNamespace(consumer)+"/gw-"+consumer] = true
	}
	if fmt.Sprint(gotServices) != fmt.Sprint(wantServices) {
		t.Errorf("the cache holds Services %v, want only our own: %v", gotServices, wantServices)
	}
	var ingresses networkingv1.IngressList
	if err := mgr.GetCache().List(ctx, &ingresses); err != nil {
		t.Fatal(err)
	}
	if len(ingresses.Items) != tenants {
		t.Errorf("the cache holds %d Ingresses, want the %d of the consumers (their hosts are the webhook's)", len(ingresses.Items), tenants)
	}
	for _, ing := range ingresses.Items {
		if len(ing.Annotations) > 0 || len(ing.Labels) > 0 || len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].HTTP != nil ||
			ing.Spec.Rules[0].Host == "" {
			t.Errorf("the cache holds more of Ingress %s/%s than its hosts: %d annotations, rules %+v", ing.Namespace, ing.Name,
				len(ing.Annotations), ing.Spec.Rules)
		}
	}

	// Still issued once: a controller reading the cache's empty copies
	// would issue a new nonce at every event.
	time.Sleep(2 * time.Second)
	for ns, nonce := range nonces {
		var s corev1.Secret
		if err := admin.Get(ctx, types.NamespacedName{Namespace: ns, Name: consts.NonceSecret}, &s); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(s.Data[consts.NonceKey], nonce) {
			t.Errorf("the nonce of %s changed without a reason", ns)
		}
	}
}
