package reflected

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/liqo-go/liqo/pkg/webhook/internal/webhooktest"
)

// TestReflectedPolicyWidens checks what each option lets through, and that
// without it the same object is refused naming the field.
func TestReflectedPolicyWidens(t *testing.T) {
	service := func(edit func(*corev1.Service)) *corev1.Service {
		s := webhooktest.ReflectedService("web", "shop-kappa", "kappa")
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
	ing := webhooktest.ReflectedIngress("front", "shop-kappa", "kappa", "shop.example.com")
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
