package reflected_test

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// withMeta adds labels and annotations (key, value pairs) to o.
func withMeta[T client.Object](o T, labels, annotations map[string]string) T {
	l, a := o.GetLabels(), o.GetAnnotations()
	if l == nil {
		l = map[string]string{}
	}
	if a == nil {
		a = map[string]string{}
	}
	for k, v := range labels {
		l[k] = v
	}
	for k, v := range annotations {
		a[k] = v
	}
	o.SetLabels(l)
	o.SetAnnotations(a)
	return o
}

// TestHostileReflectedMetadata sends, as a consumer with its twin's real
// grant, reflected objects whose labels and annotations ask systems of the
// provider to act for it (issue 30, finding 6): each refused naming the key
// and the rule that loosens it. Then the metadata ordinary tooling leaves
// on objects, which must pass.
func TestHostileReflectedMetadata(t *testing.T) {
	ctx := context.Background()
	marten, twins := webhooktest.ReflectingConsumer(t, "marten", "shop")
	shop := twins[0]
	ing := func(name string, annotations map[string]string) client.Object {
		return withMeta(webhooktest.ReflectedIngress(name, shop, "marten", name+".marten.example.com"), nil, annotations)
	}
	const annotationRule, labelRule = "--allowed-reflected-annotations", "--allowed-reflected-labels"

	hostile := []struct {
		name      string
		obj       client.Object
		fragments []string
	}{
		// Ingress controllers' annotations that reach beyond the
		// consumer's routes: a request to an address of its choosing
		// inside the provider's network for every request (auth-url,
		// mirror-target), a host another tenant serves under an alias
		// the host check does not see (server-alias).
		{"ingress-nginx's auth-url", ing("auth", map[string]string{"nginx.ingress.kubernetes.io/auth-url": "http://169.254.169.254/latest"}),
			[]string{"metadata.annotations[nginx.ingress.kubernetes.io/auth-url]", annotationRule}},
		{"ingress-nginx's mirror-target", ing("mirror", map[string]string{"nginx.ingress.kubernetes.io/mirror-target": "http://10.96.0.1/$request_uri"}),
			[]string{"metadata.annotations[nginx.ingress.kubernetes.io/mirror-target]", annotationRule}},
		{"ingress-nginx's server-alias", ing("alias", map[string]string{"nginx.ingress.kubernetes.io/server-alias": "console.provider.example"}),
			[]string{"metadata.annotations[nginx.ingress.kubernetes.io/server-alias]", annotationRule}},
		// The provider's issuer signing for the consumer; the provider's
		// DNS zone publishing the consumer's names.
		{"cert-manager's cluster issuer", ing("issuer", map[string]string{"cert-manager.io/cluster-issuer": "provider-internal-ca"}),
			[]string{"metadata.annotations[cert-manager.io/cluster-issuer]", annotationRule}},
		{"external-dns's hostname on an Ingress", ing("dns", map[string]string{"external-dns.alpha.kubernetes.io/hostname": "console.provider.example"}),
			[]string{"metadata.annotations[external-dns.alpha.kubernetes.io/hostname]", annotationRule}},
		{"external-dns's hostname on a Service", withMeta(webhooktest.ReflectedService("dns", shop, "marten"), nil,
			map[string]string{"external-dns.alpha.kubernetes.io/hostname": "api.provider.example"}),
			[]string{"metadata.annotations[external-dns.alpha.kubernetes.io/hostname]", annotationRule}},
		{"cert-manager's CA injection from a Secret", withMeta(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "ca", Namespace: shop}}, nil,
			map[string]string{"cert-manager.io/allow-direct-injection": "true"}),
			[]string{"metadata.annotations[cert-manager.io/allow-direct-injection]", annotationRule}},

		// Ingress classes: only the provider's choice of controllers.
		{"an ingress class not allowed", func() client.Object {
			i := webhooktest.ReflectedIngress("internal", shop, "marten", "internal.marten.example.com")
			i.Spec.IngressClassName = ptr.To("internal")
			return i
		}(), []string{`spec.ingressClassName "internal" is not allowed on this provider, which allows nginx`, "--allowed-ingress-classes"}},
		{"a legacy class annotation not allowed", func() client.Object {
			i := webhooktest.ReflectedIngress("legacy", shop, "marten", "legacy.marten.example.com")
			i.Spec.IngressClassName = nil
			i.Annotations = map[string]string{"kubernetes.io/ingress.class": "internal"}
			return i
		}(), []string{`metadata.annotations[kubernetes.io/ingress.class] "internal" is not allowed`, "--allowed-ingress-classes"}},
		// No default class on this provider yet (TestIngressClasses
		// makes one): a controller taking class-less Ingresses would
		// serve it.
		{"an Ingress without a class", func() client.Object {
			i := webhooktest.ReflectedIngress("classless", shop, "marten", "classless.marten.example.com")
			i.Spec.IngressClassName = nil
			return i
		}(), []string{"spec.ingressClassName is not set", "--allowed-ingress-classes"}},

		// Labels the provider's systems select objects by.
		{"a Service handed to another service proxy", withMeta(webhooktest.ReflectedService("proxied", shop, "marten"),
			map[string]string{"service.kubernetes.io/service-proxy-name": "other-proxy"}, nil),
			[]string{"metadata.labels[service.kubernetes.io/service-proxy-name]", labelRule}},
		{"a ConfigMap marked as a replica of liqo's", withMeta(webhooktest.ReflectedConfigMap("replica", shop, "marten"),
			map[string]string{consts.ReplicationLabel: "true"}, nil),
			[]string{"metadata.labels[liqo.io/replication]", labelRule}},
		{"a Secret marked as the provider's nonce", withMeta(&corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "nonce", Namespace: shop}},
			map[string]string{consts.NonceSecretLabel: "issued"}, nil),
			[]string{"metadata.labels[liqo.io/nonce]", labelRule}},
		{"an EndpointSlice handed to the provider's EndpointSlice controller", withMeta(webhooktest.ReflectedSlice("spoofed", shop, "marten"),
			map[string]string{discoveryv1.LabelManagedBy: "endpointslice-controller.k8s.io"}, nil),
			[]string{"metadata.labels[endpointslice.kubernetes.io/managed-by]", labelRule}},
		{"an EndpointSlice with a mesh annotation", withMeta(webhooktest.ReflectedSlice("meshed", shop, "marten"), nil,
			map[string]string{"networking.istio.io/exportTo": "*"}),
			[]string{"metadata.annotations[networking.istio.io/exportTo]", annotationRule}},

		// The reflection's own marks must name the consumer.
		{"a Service claiming another consumer's origin", webhooktest.ReflectedService("spoof-origin", shop, "lambda"),
			[]string{`metadata.labels[liqo.io/origin-cluster-id] "lambda" must be "marten"`, "origin rule"}},
		{"a ConfigMap passing for one of the provider's own", withMeta(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "ours", Namespace: shop}},
			map[string]string{consts.ManagedByLabel: consts.ManagedByValue}, nil),
			[]string{`metadata.labels[liqo.io/origin-cluster-id] must be "marten"`, "its own objects carry app.kubernetes.io/managed-by=liqo alone", "origin rule"}},
		// Unmarked, an object would escape the consumer's budget.ObjectBudget.
		{"a ConfigMap without origin", &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "unmarked", Namespace: shop}},
			[]string{`metadata.labels[liqo.io/origin-cluster-id] must be "marten"`, "counts each consumer's objects by it"}},
	}
	for _, h := range hostile {
		t.Run(h.name, func(t *testing.T) {
			err := marten.Create(ctx, h.obj)
			webhooktest.WantReflectedDenied(t, h.name, err, h.fragments...)
			if err != nil {
				t.Log(err)
			}
		})
	}

	// An admitted object may not gain a hostile key by an update.
	t.Run("a ConfigMap updated with a liqo label", func(t *testing.T) {
		cm := webhooktest.ReflectedConfigMap("turned", shop, "marten")
		if err := marten.Create(ctx, cm); err != nil {
			t.Fatal(err)
		}
		cm.Labels[consts.TwinNamespaceLabel] = "true"
		webhooktest.WantReflectedDenied(t, "a liqo label added by an update", marten.Update(ctx, cm), "metadata.labels[liqo.io/twin-namespace]")
	})

	helm := map[string]string{"app": "web", "app.kubernetes.io/name": "web", "app.kubernetes.io/instance": "shop",
		"app.kubernetes.io/managed-by": "Helm", "helm.sh/chart": "web-1.2.3"}
	helmAnnotations := map[string]string{"meta.helm.sh/release-name": "shop", "meta.helm.sh/release-namespace": "shop",
		"checksum/config": "0123456789abcdef", "team": "shop"}
	ordinary := []struct {
		name string
		obj  client.Object
	}{
		{"a Helm chart's Service, scraped by Prometheus", withMeta(webhooktest.ReflectedService("web", shop, "marten"), helm,
			map[string]string{"meta.helm.sh/release-name": "shop", "prometheus.io/scrape": "true", "prometheus.io/port": "9090"})},
		{"a Helm chart's ConfigMap", withMeta(webhooktest.ReflectedConfigMap("settings", shop, "marten"), helm, helmAnnotations)},
		{"an Ingress of the allowed class with an allowed annotation", withMeta(webhooktest.ReflectedIngress("front", shop, "marten", "front.marten.example.com"), helm,
			map[string]string{"nginx.ingress.kubernetes.io/rewrite-target": "/", "meta.helm.sh/release-name": "shop"})},
		{"an Ingress of the allowed class by the legacy annotation", func() client.Object {
			i := webhooktest.ReflectedIngress("legacy-nginx", shop, "marten", "legacy-nginx.marten.example.com")
			i.Spec.IngressClassName = nil
			i.Annotations = map[string]string{"kubernetes.io/ingress.class": "nginx"}
			return i
		}()},
		{"a pod's token Secret as the reflection sends it", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "web-token", Namespace: shop,
			Labels: map[string]string{forge.TokenLabel: "true", consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: "marten"},
			Annotations: map[string]string{forge.TokenServiceAccountAnnotation: "web", forge.TokenAudienceAnnotation: "https://kubernetes.default.svc",
				forge.TokenIssuedAnnotation: "2026-01-01T00:00:00Z", forge.TokenExpiryAnnotation: "2026-01-01T01:00:00Z"}},
			Type: corev1.SecretTypeOpaque, Data: map[string][]byte{"token": []byte("t")}}},
		{"a TLS Secret cert-manager issued", &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "front-tls", Namespace: shop,
			Labels: map[string]string{"controller.cert-manager.io/fao": "true", consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: "marten"},
			Annotations: map[string]string{"cert-manager.io/certificate-name": "front", "cert-manager.io/issuer-name": "letsencrypt",
				"cert-manager.io/issuer-kind": "ClusterIssuer", "cert-manager.io/common-name": "front.marten.example.com"}},
			Type: corev1.SecretTypeTLS, Data: map[string][]byte{corev1.TLSCertKey: []byte("cert"), corev1.TLSPrivateKeyKey: []byte("key")}}},
		{"a headless Service's EndpointSlice", withMeta(webhooktest.ReflectedSlice("web-abcde", shop, "marten"),
			map[string]string{corev1.IsHeadlessService: "", "app.kubernetes.io/name": "web"}, nil)},
		{"a user's reflection marks", withMeta(webhooktest.ReflectedConfigMap("marked", shop, "marten"), nil,
			map[string]string{forge.AllowReflectionAnnotation: "", "kubernetes.io/description": "settings of the shop"})},
	}
	for _, o := range ordinary {
		t.Run(o.name, func(t *testing.T) {
			if err := marten.Create(ctx, o.obj); err != nil {
				t.Errorf("%s: %v", o.name, err)
			}
		})
	}
}

// TestIngressClasses: a provider whose default IngressClass is one it
// allows takes its consumers' Ingresses as the reflection sends them,
// without a class: the API server fills in the default before the webhook
// judges it.
func TestIngressClasses(t *testing.T) {
	ctx := context.Background()
	newt, twins := webhooktest.ReflectingConsumer(t, "newt", "shop")
	class := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: "nginx",
		Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}},
		Spec: networkingv1.IngressClassSpec{Controller: "k8s.io/ingress-nginx"}}
	if err := webhooktest.Cl.Create(ctx, class); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = webhooktest.Cl.Delete(context.Background(), class) })
	// The API server defaults the class from its own cache of IngressClasses,
	// which sees the new one a moment later: wait until an administrator's
	// classless Ingress (which the webhook does not judge), tried without
	// being stored, comes back with nginx.
	webhooktest.Eventually(t, "the API server defaulting Ingresses to nginx", func(ctx context.Context) (bool, error) {
		probe := webhooktest.ReflectedIngress("probe", "default", "newt", "probe.example.com")
		probe.Labels, probe.Spec.IngressClassName = nil, nil
		if err := webhooktest.Cl.Create(ctx, probe, client.DryRunAll); err != nil {
			return false, err
		}
		return ptr.Deref(probe.Spec.IngressClassName, "") == "nginx", nil
	})
	ing := webhooktest.ReflectedIngress("front", twins[0], "newt", "front.newt.example.com")
	ing.Spec.IngressClassName = nil
	if err := newt.Create(ctx, ing); err != nil {
		t.Fatalf("an Ingress without a class where nginx is the default: %v", err)
	}
	if c := ing.Spec.IngressClassName; c == nil || *c != "nginx" {
		t.Errorf("stored with class %v, want the default nginx", c)
	}
}
