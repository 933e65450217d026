package fuzz

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/reflected"
)

// reflectedResources are the kinds a consumer reflects, as the webhook
// names them.
var reflectedResources = []schema.GroupResource{
	{Resource: "services"}, {Resource: "secrets"}, {Resource: "configmaps"}, {Resource: "persistentvolumeclaims"},
	{Group: "networking.k8s.io", Resource: "ingresses"}, {Group: "offloading.liqo.io", Resource: "shadowendpointslices"},
}

// inertLabel tells, independently of the webhook's lists, whether a
// domain-prefixed label key is one the default policy may admit on a
// reflected object of resource r: the recommended and Helm labels, the
// reflection's origin, workload controllers' pod labels, and a few keys
// of one kind each.
func inertLabel(r schema.GroupResource, key string) bool {
	prefix, _, _ := strings.Cut(key, "/")
	switch {
	case prefix == "app.kubernetes.io",
		key == "helm.sh/chart", key == consts.OriginClusterIDLabel, key == "statefulset.kubernetes.io/pod-name",
		key == "apps.kubernetes.io/pod-index", strings.HasPrefix(key, "batch.kubernetes.io/"):
		return true
	case r.Resource == "secrets":
		return key == "offloading.liqo.io/service-account-token" || key == "controller.cert-manager.io/fao"
	case r.Resource == "shadowendpointslices":
		return key == "kubernetes.io/service-name" || key == "service.kubernetes.io/headless"
	}
	return false
}

// inertAnnotationPrefixes are the only domains whose annotations the
// default policy may admit on a reflected object (some keys of each).
var inertAnnotationPrefixes = []string{"prometheus.io", "meta.helm.sh", "kubernetes.io", "liqo.io", "offloading.liqo.io"}

// FuzzReflectedMetadata: whatever labels and annotations a consumer's
// reflected object carries, of whatever kind, the default policy admits no
// domain-prefixed key outside the inert ones (no ingress controller's,
// issuer's, DNS's, mesh's or liqo's but the reflection's own; never
// endpointslice.kubernetes.io/managed-by), no origin but the consumer's
// and no liqo mark without it; every refusal names its rule; the object is
// left as it was.
func FuzzReflectedMetadata(f *testing.F) {
	f.Add(uint8(0), `{"app":"web","app.kubernetes.io/name":"web","liqo.io/origin-cluster-id":"mu"}`, `{"checksum/config":"x","prometheus.io/scrape":"true"}`)
	f.Add(uint8(4), `{"liqo.io/origin-cluster-id":"lambda"}`, `{"nginx.ingress.kubernetes.io/auth-url":"http://169.254.169.254/","kubernetes.io/ingress.class":"nginx"}`)
	f.Add(uint8(5), `{"kubernetes.io/service-name":"web","endpointslice.kubernetes.io/managed-by":"endpointslice-controller.k8s.io"}`, `{}`)
	f.Add(uint8(1), `{"app.kubernetes.io/managed-by":"liqo","controller.cert-manager.io/fao":"true"}`, `{"cert-manager.io/issuer-name":"x","cert-manager.io/allow-direct-injection":"true"}`)
	f.Add(uint8(2), `{"liqo.io/replication":"true","service.kubernetes.io/service-proxy-name":"x"}`, `{"external-dns.alpha.kubernetes.io/hostname":"a.example"}`)
	policy := &reflected.ReflectedPolicy{}
	f.Fuzz(func(t *testing.T, kind uint8, labelsJSON, annotationsJSON string) {
		var labels, annotations map[string]string
		if json.Unmarshal([]byte(labelsJSON), &labels) != nil || json.Unmarshal([]byte(annotationsJSON), &annotations) != nil {
			return
		}
		r := reflectedResources[int(kind)%len(reflectedResources)]
		obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "o", Namespace: "shop-mu", Labels: labels, Annotations: annotations}}
		before := obj.DeepCopy()
		bad := policy.VetMetadata("mu", r, obj)
		if !maps.Equal(obj.Labels, before.Labels) || !maps.Equal(obj.Annotations, before.Annotations) {
			t.Fatal("the object was modified")
		}
		for _, b := range bad {
			if !strings.Contains(b, "[rule: ") {
				t.Fatalf("a refusal names no rule: %q", b)
			}
		}
		if len(bad) > 0 {
			return
		}
		for k := range labels {
			if prefix, _, found := strings.Cut(k, "/"); found && strings.Contains(prefix, ".") && !inertLabel(r, k) {
				t.Fatalf("admitted label %s on %s", k, r)
			}
		}
		for k := range annotations {
			prefix, _, found := strings.Cut(k, "/")
			if !found || !strings.Contains(prefix, ".") {
				continue
			}
			inert := false
			for _, p := range inertAnnotationPrefixes {
				inert = inert || prefix == p
			}
			if r.Resource == "secrets" && prefix == "cert-manager.io" && k != "cert-manager.io/allow-direct-injection" {
				inert = true
			}
			if !inert {
				t.Fatalf("admitted annotation %s on %s", k, r)
			}
			if k == "kubernetes.io/ingress.class" && r.Resource != "ingresses" {
				t.Fatalf("admitted the ingress class annotation on %s", r)
			}
		}
		if o, ok := labels[consts.OriginClusterIDLabel]; ok && o != "mu" {
			t.Fatalf("admitted origin %q from consumer mu", o)
		}
		if labels[consts.ManagedByLabel] == consts.ManagedByValue && labels[consts.OriginClusterIDLabel] == "" {
			t.Fatal("admitted liqo's mark without the consumer's origin")
		}
	})
}
