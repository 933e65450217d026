package chart

import (
	"path"
	"slices"
	"testing"

	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/webhook"
)

// managerDeployment renders the chart with vals and returns the controller
// manager's Deployment.
func managerDeployment(t *testing.T, vals map[string]any) *appsv1.Deployment {
	t.Helper()
	vals["apiServer"] = map[string]any{"address": "https://203.0.113.10:6443"}
	objs, err := render(t, "liqo", vals)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" {
			var d appsv1.Deployment
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &d); err != nil {
				t.Fatal(err)
			}
			return &d
		}
	}
	t.Fatal("no Deployment rendered")
	return nil
}

// TestWebhookClientAuthValues: by default the webhooks answer only the API
// server's client certificate, signed by the cluster CA (kube-root-ca.crt)
// with the name the testbed's API servers present; turned off, the server
// asks for none.
func TestWebhookClientAuthValues(t *testing.T) {
	serving := func(d *appsv1.Deployment) webhook.ServingOptions {
		var o webhook.ServingOptions
		fs := pflag.NewFlagSet("liqo-controller-manager", pflag.ContinueOnError)
		fs.ParseErrorsAllowlist.UnknownFlags = true
		o.AddFlags(fs)
		if err := fs.Parse(d.Spec.Template.Spec.Containers[0].Args); err != nil {
			t.Fatal(err)
		}
		return o
	}

	d := managerDeployment(t, map[string]any{})
	o := serving(d)
	if o.ClientCAFile == "" || !slices.Equal(o.ClientNames, []string{testbed.WebhookClientName}) {
		t.Fatalf("by default: --webhook-client-ca %q, --webhook-client-names %v; want a CA file and [%s]", o.ClientCAFile, o.ClientNames, testbed.WebhookClientName)
	}
	c := d.Spec.Template.Spec.Containers[0]
	i := slices.IndexFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == path.Dir(o.ClientCAFile) })
	if i < 0 {
		t.Fatalf("nothing mounted at %s: %v", path.Dir(o.ClientCAFile), c.VolumeMounts)
	}
	j := slices.IndexFunc(d.Spec.Template.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == c.VolumeMounts[i].Name })
	if j < 0 || d.Spec.Template.Spec.Volumes[j].ConfigMap == nil || d.Spec.Template.Spec.Volumes[j].ConfigMap.Name != "kube-root-ca.crt" {
		t.Fatalf("the client CA's volume is not the ConfigMap kube-root-ca.crt: %v", d.Spec.Template.Spec.Volumes)
	}
	if items := d.Spec.Template.Spec.Volumes[j].ConfigMap.Items; len(items) != 1 || items[0].Path != path.Base(o.ClientCAFile) {
		t.Errorf("the client CA's volume holds %v, want %s", items, path.Base(o.ClientCAFile))
	}

	off := managerDeployment(t, map[string]any{"webhook": map[string]any{"clientAuth": map[string]any{"enabled": false}}})
	if o := serving(off); o.ClientCAFile != "" || len(o.ClientNames) > 0 {
		t.Errorf("clientAuth.enabled=false: --webhook-client-ca %q, --webhook-client-names %v; want neither", o.ClientCAFile, o.ClientNames)
	}
	if len(off.Spec.Template.Spec.Volumes) > 0 {
		t.Errorf("clientAuth.enabled=false still mounts %v", off.Spec.Template.Spec.Volumes)
	}
}
