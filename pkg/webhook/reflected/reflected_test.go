package reflected_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// TestHostileReflectedObjects sends, as a consumer with its twin
// namespace's real grant, every reflected object the provider must not
// keep for it, one per rule, and checks each is refused naming the field;
// then the ordinary objects the reflection sends, which must pass.
func TestHostileReflectedObjects(t *testing.T) {
	ctx := context.Background()
	kappa, twins := webhooktest.ReflectingConsumer(t, "kappa", "shop", "blog")
	shop, blog := twins[0], twins[1]

	// Hosts others on this provider serve: another consumer's, in its
	// twin, and the provider's own, in a namespace of its own.
	_, lambdaTwins := webhooktest.ReflectingConsumer(t, "lambda", "news")
	if err := webhooktest.Cl.Create(ctx, webhooktest.ReflectedIngress("front", lambdaTwins[0], "lambda", "news.example.com", "*.lambda.example.com")); err != nil {
		t.Fatal(err)
	}
	if err := webhooktest.Cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "provider-apps"}}); err != nil {
		t.Fatal(err)
	}
	if err := webhooktest.Cl.Create(ctx, webhooktest.ReflectedIngress("console", "provider-apps", "", "console.provider.example")); err != nil {
		t.Fatal(err)
	}

	// The webhook reads Ingresses from its cache, a few milliseconds
	// behind: wait until it has both.
	for _, host := range []string{"news.example.com", "console.provider.example"} {
		webhooktest.Eventually(t, "the webhook's cache to hold "+host, func(ctx context.Context) (bool, error) {
			err := kappa.Create(ctx, webhooktest.ReflectedIngress("probe", shop, "kappa", host), client.DryRunAll)
			return apierrors.IsForbidden(err), nil
		})
	}

	hostile := []struct {
		name      string
		obj       client.Object
		fragments []string
	}{
		{"a Service with external IPs (CVE-2020-8554)", func() client.Object {
			s := webhooktest.ReflectedService("ext-ips", shop, "kappa")
			s.Spec.ExternalIPs = []string{"10.0.0.1"}
			return s
		}(), []string{"spec.externalIPs", "CVE-2020-8554"}},
		{"an ExternalName Service", func() client.Object {
			s := webhooktest.ReflectedService("ext-name", shop, "kappa")
			s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "kubernetes.default.svc.cluster.local"}
			return s
		}(), []string{"spec.type", "ExternalName"}},
		{"a NodePort Service", func() client.Object {
			s := webhooktest.ReflectedService("node-port", shop, "kappa")
			s.Spec.Type = corev1.ServiceTypeNodePort
			return s
		}(), []string{"spec.type", "NodePort"}},
		{"a LoadBalancer Service", func() client.Object {
			s := webhooktest.ReflectedService("load-balancer", shop, "kappa")
			s.Spec.Type = corev1.ServiceTypeLoadBalancer
			return s
		}(), []string{"spec.type", "LoadBalancer"}},
		{"another consumer's host", webhooktest.ReflectedIngress("steal", shop, "kappa", "shop.example.com", "news.example.com"),
			[]string{"spec.rules[1].host", "news.example.com"}},
		{"a host under another consumer's wildcard", webhooktest.ReflectedIngress("steal-sub", shop, "kappa", "www.lambda.example.com"),
			[]string{"spec.rules[0].host", "www.lambda.example.com"}},
		{"a wildcard over another consumer's host", webhooktest.ReflectedIngress("steal-wild", shop, "kappa", "*.example.com"),
			[]string{"spec.rules[0].host", "*.example.com"}},
		{"the provider's own host", webhooktest.ReflectedIngress("steal-console", shop, "kappa", "console.provider.example"),
			[]string{"spec.rules[0].host", "console.provider.example"}},
		{"another consumer's host in TLS only", func() client.Object {
			ing := webhooktest.ReflectedIngress("steal-tls", shop, "kappa", "shop.example.com")
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"news.example.com"}, SecretName: "tls"}}
			return ing
		}(), []string{"spec.tls[0].hosts[0]", "news.example.com"}},
		{"a rule for every host", webhooktest.ReflectedIngress("catch-all", shop, "kappa", ""), []string{"spec.rules[0].host"}},
		{"a default backend", func() client.Object {
			ing := webhooktest.ReflectedIngress("default-backend", shop, "kappa", "shop.example.com")
			ing.Spec.DefaultBackend = &networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{
				Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}
			return ing
		}(), []string{"spec.defaultBackend"}},
		{"an nginx configuration snippet", func() client.Object {
			ing := webhooktest.ReflectedIngress("snippet", shop, "kappa", "shop.example.com")
			ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/configuration-snippet": "more_set_headers \"X: y\";"}
			return ing
		}(), []string{"metadata.annotations[nginx.ingress.kubernetes.io/configuration-snippet]"}},
		{"an nginx server snippet", func() client.Object {
			ing := webhooktest.ReflectedIngress("server-snippet", shop, "kappa", "shop.example.com")
			ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/server-snippet": "location /x { return 200; }"}
			return ing
		}(), []string{"metadata.annotations[nginx.ingress.kubernetes.io/server-snippet]"}},
		{"a PVC bound to a volume of the provider's choosing", func() client.Object {
			p := webhooktest.RemotePVC("claim-volume", shop, "kappa")
			p.Spec.VolumeName = "pvc-of-another-tenant"
			return p
		}(), []string{"spec.volumeName"}},
		{"a PVC selecting volumes", func() client.Object {
			p := webhooktest.RemotePVC("select-volume", shop, "kappa")
			p.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"tenant": "lambda"}}
			return p
		}(), []string{"spec.selector"}},
		{"a PVC cloned from another", func() client.Object {
			p := webhooktest.RemotePVC("clone", shop, "kappa")
			p.Spec.DataSource = &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: "data"}
			return p
		}(), []string{"spec.dataSource"}},
		{"a PVC of no class, which binds a pre-made volume", func() client.Object {
			p := webhooktest.RemotePVC("no-class", shop, "kappa")
			p.Spec.StorageClassName = ptr.To("")
			return p
		}(), []string{"spec.storageClassName", "pre-made volumes"}},
		{"a PVC of the provider's virtual class", func() client.Object {
			p := webhooktest.RemotePVC("offload-again", shop, "kappa")
			p.Spec.StorageClassName = ptr.To("liqo")
			return p
		}(), []string{"spec.storageClassName", "virtual class"}},
		{"a ServiceAccount token Secret", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "token", Namespace: shop,
			Annotations: map[string]string{corev1.ServiceAccountNameKey: "default"}}, Type: corev1.SecretTypeServiceAccountToken},
			[]string{"type", string(corev1.SecretTypeServiceAccountToken)}},
	}
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			err := kappa.Create(ctx, h.obj)
			webhooktest.WantReflectedDenied(t, h.name, err, h.fragments...)
			if err != nil {
				t.Log(err)
			}
		})
	}

	// An object admitted as it was may not be turned into a hostile one.
	t.Run("a Service updated with external IPs", func(t *testing.T) {
		s := webhooktest.ReflectedService("turned", shop, "kappa")
		if err := kappa.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		s.Spec.ExternalIPs = []string{"192.0.2.10"}
		webhooktest.WantReflectedDenied(t, "external IPs added by an update", kappa.Update(ctx, s), "spec.externalIPs")
	})

	ordinary := []struct {
		name string
		obj  client.Object
	}{
		{"a ClusterIP Service", webhooktest.ReflectedService("web", shop, "kappa")},
		{"a headless Service", func() client.Object {
			s := webhooktest.ReflectedService("headless", shop, "kappa")
			s.Spec.ClusterIP = corev1.ClusterIPNone
			return s
		}()},
		{"an Ingress for the consumer's own host", func() client.Object {
			ing := webhooktest.ReflectedIngress("front", shop, "kappa", "shop.example.com", "*.kappa.example.com")
			ing.Spec.TLS = []networkingv1.IngressTLS{{Hosts: []string{"shop.example.com"}, SecretName: "tls"}}
			ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/"}
			return ing
		}()},
		// The same consumer may split a host between its namespaces.
		{"the consumer's host in another of its twins", webhooktest.ReflectedIngress("front", blog, "kappa", "shop.example.com")},
		{"an Opaque Secret", &corev1.Secret{ObjectMeta: webhooktest.ReflectedConfigMap("creds", shop, "kappa").ObjectMeta,
			Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"password": []byte("s3cret")}}},
		{"a TLS Secret", &corev1.Secret{ObjectMeta: webhooktest.ReflectedConfigMap("tls", shop, "kappa").ObjectMeta, Type: corev1.SecretTypeTLS,
			Data: map[string][]byte{corev1.TLSCertKey: []byte("cert"), corev1.TLSPrivateKeyKey: []byte("key")}}},
		{"a PVC as the storage fabric sends it", webhooktest.RemotePVC("data-db-0", shop, "kappa")},
		{"a ConfigMap", webhooktest.ReflectedConfigMap("settings", shop, "kappa")},
	}
	for _, o := range ordinary {
		t.Run(o.name, func(t *testing.T) {
			if err := kappa.Create(ctx, o.obj); err != nil {
				t.Errorf("%s: %v", o.name, err)
			}
		})
	}
	// The consumer's own Ingress may be updated keeping its hosts.
	t.Run("an update of the consumer's own Ingress", func(t *testing.T) {
		var ing networkingv1.Ingress
		if err := kappa.Get(ctx, client.ObjectKey{Namespace: shop, Name: "front"}, &ing); err != nil {
			t.Fatal(err)
		}
		ing.Labels["tier"] = "front"
		if err := kappa.Update(ctx, &ing); err != nil {
			t.Errorf("updating the consumer's own Ingress: %v", err)
		}
	})

	// The provider's administrators are not judged: what they write in a
	// twin is theirs to decide. (A NodePort would not do here: the twin's
	// ResourceQuota allows none until the administrator raises it.)
	t.Run("an administrator's Service with externalIPs in a twin", func(t *testing.T) {
		s := webhooktest.ReflectedService("admin-external-ip", shop, "kappa")
		s.Spec.ExternalIPs = []string{"192.0.2.10"}
		if err := webhooktest.Cl.Create(ctx, s); err != nil {
			t.Errorf("an administrator's Service with externalIPs: %v", err)
		}
	})
}
