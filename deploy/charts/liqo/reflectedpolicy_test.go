package chart

import (
	"strings"
	"testing"

	"github.com/liqo-go/liqo/pkg/webhook/reflected"
)

func reflectedPolicyFlags(t *testing.T, reflectedPolicy map[string]any) reflected.ReflectedPolicy {
	t.Helper()
	return policyFlags[reflected.ReflectedPolicy](t, "reflectedPolicy", reflectedPolicy)
}

// TestReflectedPolicyValues: the chart's defaults are the manager's (the
// zero policy: nothing beyond ClusterIP Services and inert metadata, no
// Ingress), and each value reaches its flag.
func TestReflectedPolicyValues(t *testing.T) {
	p := reflectedPolicyFlags(t, nil)
	if len(p.ServiceTypes) != 0 || p.ExternalIPs || len(p.IngressClasses) != 0 || len(p.Annotations) != 0 ||
		len(p.IngressAnnotations) != 0 || len(p.Labels) != 0 {
		t.Errorf("the chart's defaults: %+v", p)
	}
	p = reflectedPolicyFlags(t, map[string]any{"allowedServiceTypes": []any{"NodePort"}, "allowExternalIPs": true,
		"allowedIngressClasses": []any{"nginx"}, "allowedAnnotations": []any{"k8gb.io/*"},
		"deniedIngressAnnotations": []any{"nginx.ingress.kubernetes.io/auth-url"}, "allowedLabels": []any{"example.com/team"}})
	if strings.Join(p.ServiceTypes, ",") != "NodePort" || !p.ExternalIPs || strings.Join(p.IngressClasses, ",") != "nginx" ||
		strings.Join(p.Annotations, ",") != "k8gb.io/*" || strings.Join(p.IngressAnnotations, ",") != "nginx.ingress.kubernetes.io/auth-url" ||
		strings.Join(p.Labels, ",") != "example.com/team" {
		t.Errorf("values set: %+v", p)
	}
}
