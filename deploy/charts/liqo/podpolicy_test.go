package chart

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/liqo-go/liqo/pkg/webhook"
)

// podPolicyFlags renders the chart with podPolicy and parses the
// controller manager's arguments into a pod policy, as the manager does
// (nil: the chart's defaults).
func podPolicyFlags(t *testing.T, podPolicy map[string]any) webhook.PodPolicy {
	t.Helper()
	vals := map[string]any{"apiServer": map[string]any{"address": "https://203.0.113.10:6443"}}
	if podPolicy != nil {
		// A nil value would delete the chart's defaults.
		vals["offloading"] = map[string]any{"podPolicy": podPolicy}
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
		var p webhook.PodPolicy
		fs := pflag.NewFlagSet("liqo-controller-manager", pflag.ContinueOnError)
		fs.ParseErrorsAllowlist.UnknownFlags = true
		p.AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("parsing %v: %v", args, err)
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("the rendered pod policy: %v", err)
		}
		return p
	}
	t.Fatal("no Deployment rendered")
	return webhook.PodPolicy{}
}

// TestPodPolicyValues: the chart's defaults are the manager's, and each
// value reaches its flag.
func TestPodPolicyValues(t *testing.T) {
	p := podPolicyFlags(t, nil)
	if !slices.Equal(p.MetadataOnlyAnnotations, webhook.DefaultMetadataOnlyAnnotations) {
		t.Errorf("the chart's metadataOnlyAnnotations %v differ from the manager's %v", p.MetadataOnlyAnnotations, webhook.DefaultMetadataOnlyAnnotations)
	}
	if p.MaxPriority == nil || *p.MaxPriority != webhook.HighestUserPriority || len(p.RuntimeClasses) != 0 || len(p.PriorityClasses) != 0 ||
		len(p.Annotations) != 0 || len(p.Labels) != 0 || len(p.VolumeTypes) != 0 || len(p.ReservedTaints) != 0 || p.Level.OrDefault() != "baseline" {
		t.Errorf("the chart's defaults: %+v", p)
	}

	p = podPolicyFlags(t, map[string]any{"securityLevel": "restricted", "maxPriority": 1000, "allowedPriorityClasses": []any{"batch"},
		"offeredRuntimeClasses": []any{"nvidia"}, "allowedAnnotations": []any{"example.com/*"}, "metadataOnlyAnnotations": []any{},
		"allowedVolumeTypes": []any{"csi"}, "reservedTaintKeys": []any{"example.com/dedicated"}, "allowedLabels": []any{"example.com/team"}})
	if p.Level != "restricted" || *p.MaxPriority != 1000 || strings.Join(p.PriorityClasses, ",") != "batch" ||
		strings.Join(p.RuntimeClasses, ",") != "nvidia" || strings.Join(p.Annotations, ",") != "example.com/*" ||
		p.MetadataOnlyAnnotations == nil || len(p.MetadataOnlyAnnotations) != 0 || strings.Join(p.VolumeTypes, ",") != "csi" ||
		strings.Join(p.ReservedTaints, ",") != "example.com/dedicated" || strings.Join(p.Labels, ",") != "example.com/team" {
		t.Errorf("values set: %+v", p)
	}
}
