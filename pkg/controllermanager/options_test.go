package controllermanager

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/reflection"
	"github.com/liqo-go/liqo/pkg/webhook"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*Options)
		wantErr string
	}{
		{"defaults with an ID", func(*Options) {}, ""},
		{"no ID", func(o *Options) { o.ClusterID = "" }, "--cluster-id is required"},
		{"ID not a DNS label", func(o *Options) { o.ClusterID = "Rome_1" }, "not a DNS label"},
		{"ID too long for its tenant namespace", func(o *Options) { o.ClusterID = strings.Repeat("a", 60) }, "too long"},
		{"percentage above 100", func(o *Options) { o.SharingPercentage = 101 }, "between 0 and 100"},
		{"unknown slice policy", func(o *Options) { o.SlicePolicy = "Maybe" }, "Clamp or Deny"},
		{"unknown enforcement", func(o *Options) { o.QuotaEnforcement = "Strict" }, "Hard, Soft or None"},
		{"zero health check", func(o *Options) { o.HealthCheckInterval = 0 }, "must be positive"},
		{"no bytes for the consumers' objects", func(o *Options) { o.TenantObjects.MaxBytes.Quantity = resource.MustParse("0") }, "--max-tenant-object-bytes"},
		{"no room for the consumers' objects", func(o *Options) { o.TenantObjects.MaxCount = 0 }, "--max-tenant-objects"},
		{"webhook on every interface, no advertised host", func(o *Options) { o.WebhookAddr = "0.0.0.0:9443" }, "--webhook-address"},
		{"webhook on every interface, advertised", func(o *Options) { o.WebhookAddr, o.WebhookAdvertiseHost = ":9443", "10.0.0.5" }, ""},
		{"webhook address without port", func(o *Options) { o.WebhookAddr = "127.0.0.1" }, "not host:port"},
		{"kubelet API on every interface, no advertised IP", func(o *Options) { o.KubeletAPIAddr = "0.0.0.0:10250" }, "--kubelet-api-address"},
		{"kubelet API on every interface, advertised", func(o *Options) { o.KubeletAPIAddr, o.KubeletAPIAdvertiseIP = ":10250", "10.0.0.5" }, ""},
		{"kubelet API certificate unknown", func(o *Options) { o.KubeletAPICertificate = "acme" }, "certificate mode"},
		{"neither in the cluster nor self-provisioned", func(o *Options) { o.SelfProvision = false }, "--webhook-service is required"},
		{"in the cluster, webhook on every interface", func(o *Options) {
			o.SelfProvision, o.WebhookAddr, o.WebhookService = false, ":9443", &webhook.ServiceRef{Namespace: "liqo", Name: "liqo-webhook"}
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := DefaultOptions()
			o.ClusterID, o.SelfProvision = "rome", true
			c.mutate(&o)
			err := o.Validate()
			if c.wantErr == "" && err != nil || c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("got %v, want error containing %q", err, c.wantErr)
			}
		})
	}
}

func TestLabels(t *testing.T) {
	l, err := ParseLabels(" region=eu , tier=gold,empty=")
	if err != nil || len(l) != 3 || l["region"] != "eu" || l["empty"] != "" {
		t.Fatalf("got %v, %v", l, err)
	}
	if FormatLabels(l) != "empty=,region=eu,tier=gold" {
		t.Fatalf("format: %s", FormatLabels(l))
	}
	for _, bad := range []string{"novalue", "=x"} {
		if _, err := ParseLabels(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestReflectionFlags(t *testing.T) {
	o := DefaultOptions()
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--configmap-reflection-workers=0", "--secret-reflection-type=allowlist", "--event-reflection-workers=2"}); err != nil {
		t.Fatal(err)
	}
	if got := o.Reflection[reflection.ConfigMaps]; got.Workers != 0 || got.Policy != forge.DenyList {
		t.Errorf("configmaps = %+v, want disabled, policy untouched", got)
	}
	if got := o.Reflection[reflection.Secrets]; got.Policy != forge.AllowList || got.Workers != reflection.DefaultKinds()[reflection.Secrets].Workers {
		t.Errorf("secrets = %+v", got)
	}
	if got := o.Reflection[reflection.Events].Workers; got != 2 {
		t.Errorf("event workers = %d", got)
	}
	if fs.Lookup("event-reflection-type") != nil {
		t.Error("events have no reflection policy, yet the flag exists")
	}
	for _, bad := range [][]string{{"--service-reflection-workers=-1"}, {"--service-reflection-workers=many"}, {"--ingress-reflection-type=Some"}} {
		fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		o := DefaultOptions()
		o.AddFlags(fs)
		if err := fs.Parse(bad); err == nil {
			t.Errorf("%v accepted", bad)
		}
	}
}
