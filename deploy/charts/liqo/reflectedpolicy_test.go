package chart

import (
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/liqo-go/liqo/pkg/webhook"
)

// reflectedPolicyFlags renders the chart with reflectedPolicy and parses
// the controller manager's arguments into a reflected-objects policy, as
// the manager does (nil: the chart's defaults).
func reflectedPolicyFlags(t *testing.T, reflectedPolicy map[string]any) webhook.ReflectedPolicy {
	t.Helper()
	vals := map[string]any{"apiServer": map[string]any{"address": "https://203.0.113.10:6443"}}
	if reflectedPolicy != nil {
		vals["offloading"] = map[string]any{"reflectedPolicy": reflectedPolicy}
	}
	objs, err := render(t, "liqo", vals)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		var p webhook.ReflectedPolicy
		fs := pflag.NewFlagSet("liqo-controller-manager", pflag.ContinueOnError)
		fs.ParseErrorsAllowlist.UnknownFlags = true
		p.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("parsing %v: %v", args, err)
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("the rendered reflected-objects policy: %v", err)
		}
		return p
	}
	t.Fatal("no Deployment rendered")
	return webhook.ReflectedPolicy{}
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
