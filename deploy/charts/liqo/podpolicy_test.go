package chart

import (
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/liqo-go/liqo/pkg/webhook/podpolicy"
)

// policyFlags renders the chart with offloading.<key> set to values and
// parses the controller manager's arguments into a policy P, as the
// manager does (nil values: the chart's defaults).
func policyFlags[P any, PP interface {
	*P
	AddFlags(*pflag.FlagSet)
	Validate() error
}](t *testing.T, key string, values map[string]any) P {
	t.Helper()
	vals := map[string]any{"apiServer": map[string]any{"address": "https://203.0.113.10:6443"}}
	if values != nil {
		// A nil value would delete the chart's defaults.
		vals["offloading"] = map[string]any{key: values}
	}
	objs, err := render(t, "liqo", vals)
	if err != nil {
		t.Fatal(err)
	}
	var p P
	for _, o := range objs {
		if o.GetKind() != "Deployment" {
			continue
		}
		containers, _, _ := unstructured.NestedSlice(o.Object, "spec", "template", "spec", "containers")
		args, _, _ := unstructured.NestedStringSlice(containers[0].(map[string]any), "args")
		fs := pflag.NewFlagSet("liqo-controller-manager", pflag.ContinueOnError)
		fs.ParseErrorsAllowlist.UnknownFlags = true
		PP(&p).AddFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("parsing %v: %v", args, err)
		}
		if err := PP(&p).Validate(); err != nil {
			t.Fatalf("the rendered %s: %v", key, err)
		}
		return p
	}
	t.Fatal("no Deployment rendered")
	return p
}

func podPolicyFlags(t *testing.T, podPolicy map[string]any) podpolicy.PodPolicy {
	t.Helper()
	return policyFlags[podpolicy.PodPolicy](t, "podPolicy", podPolicy)
}

// TestPodPolicyValues: the chart's defaults are the manager's, and each
// value reaches its flag.
func TestPodPolicyValues(t *testing.T) {
	p := podPolicyFlags(t, nil)
	if !slices.Equal(p.MetadataOnlyAnnotations, podpolicy.DefaultMetadataOnlyAnnotations) {
		t.Errorf("the chart's metadataOnlyAnnotations %v differ from the manager's %v", p.MetadataOnlyAnnotations, podpolicy.DefaultMetadataOnlyAnnotations)
	}
	if !slices.Equal(p.DedicatedTaints, podpolicy.DefaultDedicatedTaints) || p.AllowResourceClaims || p.KeepImagePullPolicy {
		t.Errorf("the chart's dedicatedTaintKeys %v differ from the manager's %v, or it allows resource claims", p.DedicatedTaints, podpolicy.DefaultDedicatedTaints)
	}
	if p.MaxPriority == nil || *p.MaxPriority != podpolicy.HighestUserPriority || len(p.RuntimeClasses) != 0 || len(p.PriorityClasses) != 0 ||
		len(p.Annotations) != 0 || len(p.Labels) != 0 || len(p.VolumeTypes) != 0 || len(p.ReservedTaints) != 0 || p.Level.OrDefault() != "baseline" {
		t.Errorf("the chart's defaults: %+v", p)
	}

	p = podPolicyFlags(t, map[string]any{"securityLevel": "restricted", "maxPriority": 1000, "allowedPriorityClasses": []any{"batch"},
		"offeredRuntimeClasses": []any{"nvidia"}, "allowedAnnotations": []any{"example.com/*"}, "metadataOnlyAnnotations": []any{},
		"allowedVolumeTypes": []any{"csi"}, "reservedTaintKeys": []any{"example.com/dedicated"}, "allowedLabels": []any{"example.com/team"},
		"dedicatedTaintKeys": []any{}, "allowResourceClaims": true, "keepImagePullPolicy": true})
	if p.Level != "restricted" || *p.MaxPriority != 1000 || strings.Join(p.PriorityClasses, ",") != "batch" ||
		strings.Join(p.RuntimeClasses, ",") != "nvidia" || strings.Join(p.Annotations, ",") != "example.com/*" ||
		p.MetadataOnlyAnnotations == nil || len(p.MetadataOnlyAnnotations) != 0 || strings.Join(p.VolumeTypes, ",") != "csi" ||
		strings.Join(p.ReservedTaints, ",") != "example.com/dedicated" || strings.Join(p.Labels, ",") != "example.com/team" ||
		p.DedicatedTaints == nil || len(p.DedicatedTaints) != 0 || !p.AllowResourceClaims || !p.KeepImagePullPolicy {
		t.Errorf("values set: %+v", p)
	}
}
