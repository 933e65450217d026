package webhook

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	admissionv1 "k8s.io/api/admission/v1"
	authnv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/pkg/consts"
)

// TestReflectedPolicyWidens checks what each option lets through, and that
// without it the same object is refused naming the field.
func TestReflectedPolicyWidens(t *testing.T) {
	service := func(edit func(*corev1.Service)) *corev1.Service {
		s := reflectedService("web", "shop-kappa", "kappa")
		s.Spec.Type = corev1.ServiceTypeClusterIP
		edit(s)
		return s
	}
	tests := []struct {
		name   string
		policy ReflectedPolicy
		svc    *corev1.Service
		field  string
	}{
		{"an allowed NodePort", ReflectedPolicy{ServiceTypes: []string{"NodePort"}},
			service(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeNodePort }), "spec.type NodePort is not allowed"},
		{"an allowed LoadBalancer", ReflectedPolicy{ServiceTypes: []string{"ClusterIP", "LoadBalancer"}},
			service(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeLoadBalancer }), "spec.type LoadBalancer is not allowed"},
		{"an allowed ExternalName", ReflectedPolicy{ServiceTypes: []string{"ExternalName"}},
			service(func(s *corev1.Service) {
				s.Spec = corev1.ServiceSpec{Type: corev1.ServiceTypeExternalName, ExternalName: "db.example.com"}
			}),
			"spec.type ExternalName is not allowed"},
		{"allowed external IPs", ReflectedPolicy{ExternalIPs: true},
			service(func(s *corev1.Service) { s.Spec.ExternalIPs = []string{"192.0.2.1"} }), "spec.externalIPs must be empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if bad := tt.policy.vetService(tt.svc); len(bad) > 0 {
				t.Errorf("refused under %+v: %q", tt.policy, bad)
			}
			bad := strings.Join((&ReflectedPolicy{}).vetService(tt.svc), "\n")
			if !strings.Contains(bad, tt.field) {
				t.Errorf("under the default policy: %q, want a refusal containing %q", bad, tt.field)
			}
		})
	}

	// Allowing one type allows no other.
	lb := service(func(s *corev1.Service) { s.Spec.Type = corev1.ServiceTypeLoadBalancer })
	bad := strings.Join((&ReflectedPolicy{ServiceTypes: []string{"NodePort"}}).vetService(lb), "\n")
	if !strings.Contains(bad, "spec.type LoadBalancer is not allowed on this provider, which allows ClusterIP, NodePort (offloading.reflectedPolicy.allowedServiceTypes, --allowed-service-types)") {
		t.Errorf("a LoadBalancer where only NodePort is allowed: %q", bad)
	}

	// Denied annotations narrow; snippets stay refused whatever the policy.
	ing := reflectedIngress("front", "shop-kappa", "kappa", "shop.example.com")
	ing.Annotations = map[string]string{"nginx.ingress.kubernetes.io/auth-url": "http://169.254.169.254/", "example.com/team": "shop",
		"haproxy.org/backend-config-snippet": "x"}
	if bad := strings.Join((&ReflectedPolicy{}).vetIngress(ing), "\n"); strings.Contains(bad, "auth-url") || strings.Contains(bad, "example.com/team") ||
		!strings.Contains(bad, "metadata.annotations[haproxy.org/backend-config-snippet] is not allowed") {
		t.Errorf("under the default policy: %q, want only the snippet refused", bad)
	}
	narrow := &ReflectedPolicy{IngressAnnotations: []string{"nginx.ingress.kubernetes.io/auth-url", "example.com/*"}}
	bad = strings.Join(narrow.vetIngress(ing), "\n")
	for _, want := range []string{"metadata.annotations[nginx.ingress.kubernetes.io/auth-url] is not allowed on this provider",
		"metadata.annotations[example.com/team] is not allowed on this provider", "backend-config-snippet"} {
		if !strings.Contains(bad, want) {
			t.Errorf("under %+v: %q, want a refusal containing %q", narrow, bad, want)
		}
	}
}

func TestReflectedPolicyFlags(t *testing.T) {
	var p ReflectedPolicy
	fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
	p.AddFlags(fs)
	err := fs.Parse([]string{"--allowed-service-types=NodePort,LoadBalancer", "--allow-external-ips",
		"--denied-ingress-annotations=nginx.ingress.kubernetes.io/auth-url,example.com/*", "--allowed-ingress-classes=nginx",
		"--allowed-reflected-annotations=k8gb.io/*,nginx.ingress.kubernetes.io/rewrite-target", "--allowed-reflected-labels=example.com/team"})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.ServiceTypes) != 2 || !p.ExternalIPs || len(p.IngressAnnotations) != 2 || len(p.IngressClasses) != 1 ||
		len(p.Annotations) != 2 || len(p.Labels) != 1 {
		t.Errorf("parsed %+v", p)
	}
	if err := p.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}
	for _, tt := range []struct {
		p    ReflectedPolicy
		want string
	}{
		{ReflectedPolicy{}, ""},
		{ReflectedPolicy{ServiceTypes: []string{"ClusterIP", "ExternalName"}}, ""},
		{ReflectedPolicy{ServiceTypes: []string{"nodeport"}}, `--allowed-service-types: "nodeport" is no Service type`},
		{ReflectedPolicy{IngressAnnotations: []string{"bad key!"}}, "--denied-ingress-annotations"},
		{ReflectedPolicy{IngressClasses: []string{"Nginx Public"}}, `--allowed-ingress-classes: "Nginx Public" is no ingress class name`},
		{ReflectedPolicy{Annotations: []string{"k8gb.io/**"}}, "--allowed-reflected-annotations"},
		{ReflectedPolicy{Labels: []string{"bad key!"}}, "--allowed-reflected-labels"},
	} {
		err := tt.p.Validate()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("Validate(%+v) = %v, want %q", tt.p, err, tt.want)
		}
	}
}

func TestHostOverlap(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want bool
	}{
		{"shop.example.com", "shop.example.com", true},
		{"shop.example.com", "blog.example.com", false},
		{"*.example.com", "shop.example.com", true},
		{"shop.example.com", "*.example.com", true},
		{"*.example.com", "*.example.com", true},
		// A wildcard covers exactly one label.
		{"*.example.com", "a.shop.example.com", false},
		{"*.example.com", "example.com", false},
		{"*.shop.example.com", "*.example.com", false},
		{"localhost", "localhost", true},
	} {
		if got := overlap(tt.a, tt.b); got != tt.want {
			t.Errorf("overlap(%s, %s) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

// serviceReview is user's admission request creating s.
func serviceReview(t *testing.T, user authnv1.UserInfo, s *corev1.Service) admission.Request {
	t.Helper()
	s = s.DeepCopy()
	s.APIVersion, s.Kind = "v1", "Service"
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{UID: "test",
		Kind: metav1.GroupVersionKind{Version: "v1", Kind: "Service"}, Resource: metav1.GroupVersionResource{Version: "v1", Resource: "services"},
		Name: s.Name, Namespace: s.Namespace, Operation: admissionv1.Create, UserInfo: user, Object: runtime.RawExtension{Raw: raw}}}
}

// TestReflectedIdentities sends to the handler what RBAC stops before it:
// a consumer writing outside its twins and half consumer identities, which
// must be refused there too; an administrator is not judged.
func TestReflectedIdentities(t *testing.T) {
	ctx := context.Background()
	_, twins := reflectingConsumer(t, "iota", "shop")
	v := &reflectedValidator{reader: cl, decoder: admission.NewDecoder(apis.NewScheme()), budget: emptyBudget()}
	consumerOf := func(id string) authnv1.UserInfo {
		return authnv1.UserInfo{Username: consts.ConsumerUser(id), Groups: []string{consts.ConsumerGroup}}
	}
	nodePort := reflectedService("web", twins[0], "iota")
	nodePort.Spec.Type = corev1.ServiceTypeNodePort

	wantRefused(t, "a Service in another consumer's twin", v.Handle(ctx, serviceReview(t, consumerOf("theta"), reflectedService("web", twins[0], "theta"))),
		"consumer theta may not write services in namespace shop-iota, which is not one of its twin namespaces")
	wantRefused(t, "a Service outside any twin", v.Handle(ctx, serviceReview(t, consumerOf("iota"), reflectedService("web", "default", "iota"))),
		"consumer iota may not write services in namespace default")
	wantRefused(t, "a consumer name without the group",
		v.Handle(ctx, serviceReview(t, authnv1.UserInfo{Username: consts.ConsumerUser("iota")}, reflectedService("web", twins[0], "iota"))),
		"is not in group "+consts.ConsumerGroup)
	wantRefused(t, "the group without a consumer name",
		v.Handle(ctx, serviceReview(t, authnv1.UserInfo{Username: "mallory", Groups: []string{consts.ConsumerGroup}}, reflectedService("web", twins[0], "iota"))),
		"is not named "+consts.ConsumerUser(""))
	wantRefused(t, "the consumer's NodePort Service", v.Handle(ctx, serviceReview(t, consumerOf("iota"), nodePort)), "spec.type NodePort")
	if resp := v.Handle(ctx, serviceReview(t, authnv1.UserInfo{Username: "kubernetes-admin", Groups: []string{"system:masters"}}, nodePort)); !resp.Allowed {
		t.Errorf("an administrator's NodePort Service refused: %+v", resp.Result)
	}
	if resp := v.Handle(ctx, serviceReview(t, consumerOf("iota"), reflectedService("web", twins[0], "iota"))); !resp.Allowed {
		t.Errorf("the consumer's ClusterIP Service refused: %+v", resp.Result)
	}
}
