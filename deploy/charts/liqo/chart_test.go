package chart

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chartutil"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/pkg/twinname"
)

var cluster *testbed.Cluster

func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) { cluster = tb.Clusters[0] }, testbed.ClusterSpec{Name: "chart"})
}

// render renders the chart as liqoctl installs it, without a cluster.
func render(t *testing.T, namespace string, vals map[string]any) ([]*unstructured.Unstructured, error) {
	t.Helper()
	c, err := Load("v1.2.3")
	if err != nil {
		t.Fatal(err)
	}
	in := action.NewInstall(&action.Configuration{})
	in.ReleaseName, in.Namespace, in.DryRun, in.ClientOnly = "liqo", namespace, true, true
	in.KubeVersion = &chartutil.KubeVersion{Version: "v1.34.0", Major: "1", Minor: "34"}
	rel, err := in.Run(c, vals)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(rel.Manifest), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding the rendered manifest: %v", err)
		}
		if len(u.Object) > 0 {
			out = append(out, u)
		}
	}
	return out, nil
}

// TestRenderApplies renders the chart and applies every object with a
// server-side dry run to a testbed API server: each is valid as the API
// server sees it (schema, RBAC references, webhook configurations).
func TestRenderApplies(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl, err := client.New(cluster.Config, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "liqo-chart-"}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cl.Delete(context.Background(), ns) }()
	objs, err := render(t, ns.Name, map[string]any{
		"apiServer":         map[string]any{"address": "https://203.0.113.10:6443"},
		"clusterID":         "rome",
		"clusterLabels":     map[string]any{"region": "eu"},
		"controllerManager": map[string]any{"replicas": 2},
		"ipam":              map[string]any{"podCIDR": "10.244.0.0/16", "reservedSubnets": []any{"192.168.0.0/16"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, o := range objs {
		kinds[o.GetKind()]++
		if o.GetLabels()["app.kubernetes.io/part-of"] != "liqo" {
			t.Errorf("%s %s lacks the label app.kubernetes.io/part-of=liqo", o.GetKind(), o.GetName())
		}
		if o.GetNamespace() == "" && isNamespaced(o.GetKind()) {
			o.SetNamespace(ns.Name)
		}
		if err := cl.Patch(ctx, o, client.Apply, client.FieldOwner("liqoctl"), client.DryRunAll, client.ForceOwnership); err != nil {
			t.Errorf("%s %s: %v", o.GetKind(), o.GetName(), err)
		}
	}
	for kind, n := range map[string]int{"Deployment": 1, "ServiceAccount": 1, "ClusterRole": 6, "ClusterRoleBinding": 1, "ConfigMap": 1,
		"Service": 1, "MutatingWebhookConfiguration": 1, "ValidatingWebhookConfiguration": 1} {
		if kinds[kind] != n {
			t.Errorf("%d %s rendered, want %d (all: %v)", kinds[kind], kind, n, kinds)
		}
	}
	// The labels the reference's tools select by (see consts.AppNameLabel).
	for kind, name := range map[string]string{"ConfigMap": "clusterid-configmap", "Deployment": "controller-manager"} {
		found := 0
		for _, o := range objs {
			if o.GetKind() == kind && o.GetLabels()["app.kubernetes.io/name"] == name {
				found++
			}
		}
		if found != 1 {
			t.Errorf("%d %s labelled app.kubernetes.io/name=%s, want 1", found, kind, name)
		}
	}
	for _, o := range objs {
		switch o.GetKind() {
		case "Deployment":
			if r, _, _ := unstructured.NestedInt64(o.Object, "spec", "replicas"); r != 2 {
				t.Errorf("replicas %d, want 2", r)
			}
			b, _ := o.MarshalJSON()
			for _, want := range []string{"ghcr.io/liqo-go/liqo-controller-manager:v1.2.3", "--webhook-service=" + ns.Name + "/liqo-webhook",
				"--api-server-url=https://203.0.113.10:6443", "--pod-cidr=10.244.0.0/16", "--reserved-subnets=192.168.0.0/16",
				// The chart's default is the manager's.
				"--reserved-twin-namespaces=" + strings.Join(twinname.DefaultReserved(), ",")} {
				if !bytes.Contains(b, []byte(want)) {
					t.Errorf("the Deployment lacks %q", want)
				}
			}
		case "MutatingWebhookConfiguration":
			if svcNS, _, _ := unstructured.NestedString(o.Object, "webhooks", "0", "clientConfig", "service", "namespace"); svcNS != "" && svcNS != ns.Name {
				t.Errorf("the webhook calls a Service in %q", svcNS)
			}
		}
	}
}

func isNamespaced(kind string) bool {
	switch kind {
	case "ClusterRole", "ClusterRoleBinding", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "Namespace":
		return false
	}
	return true
}

// TestRenderRefuses: values the chart cannot work with fail the render
// with a message saying what to give.
func TestRenderRefuses(t *testing.T) {
	if _, err := render(t, "liqo", map[string]any{}); err == nil || !strings.Contains(err.Error(), "apiServer.address is required") {
		t.Errorf("without apiServer.address: %v", err)
	}
	api := map[string]any{"address": "https://203.0.113.10:6443"}
	for _, c := range []struct {
		name string
		vals map[string]any
		want []string
	}{
		{"a mistyped key", map[string]any{"apiServer": api, "sharing": map[string]any{"percentag": 30}}, []string{"percentag"}},
		{"an unknown top-level key", map[string]any{"apiServer": api, "virtualKubelet": map[string]any{}}, []string{"virtualKubelet"}},
		{"a value of the wrong type", map[string]any{"apiServer": api, "sharing": map[string]any{"percentage": "half"}}, []string{"percentage"}},
		{"the seed's authentication switch", map[string]any{"apiServer": api, "auth": map[string]any{"config": map[string]any{"enableAuthentication": false}}},
			[]string{"enableAuthentication=false is not supported", "networking.internal=false"}},
		{"the reference's auth ingress", map[string]any{"apiServer": api, "auth": map[string]any{"ingress": map[string]any{"enable": true, "host": "auth.example.com"}}},
			[]string{"auth.ingress is not supported", "apiServer.address"}},
	} {
		_, err := render(t, "liqo", c.vals)
		for _, want := range c.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v; want an error with %q", c.name, err, want)
			}
		}
	}
}

// TestRenderNetworkingInternal: the seed's networking.internal=false
// renders a controller manager without the pod CIDR, so that no node agent
// runs; the default passes it.
func TestRenderNetworkingInternal(t *testing.T) {
	for internal, want := range map[bool]bool{true: true, false: false} {
		objs, err := render(t, "liqo", map[string]any{"apiServer": map[string]any{"address": "https://203.0.113.10:6443"},
			"ipam": map[string]any{"podCIDR": "10.244.0.0/16"}, "networking": map[string]any{"internal": internal}})
		if err != nil {
			t.Fatal(err)
		}
		for _, o := range objs {
			if o.GetKind() == "Deployment" {
				b, _ := o.MarshalJSON()
				if got := bytes.Contains(b, []byte("--pod-cidr=10.244.0.0/16")); got != want {
					t.Errorf("networking.internal=%v: --pod-cidr passed %v, want %v", internal, got, want)
				}
			}
		}
	}
}

func TestLoadVersion(t *testing.T) {
	for v, want := range map[string]string{"v1.2.3": "1.2.3", "1.0.0-rc.1": "1.0.0-rc.1", "dev": "0.0.0-dev", "testbed": "0.0.0-dev"} {
		c, err := Load(v)
		if err != nil {
			t.Fatal(err)
		}
		if c.Metadata.Version != want || c.Metadata.AppVersion != v {
			t.Errorf("Load(%q): version %q appVersion %q, want %q and %q", v, c.Metadata.Version, c.Metadata.AppVersion, want, v)
		}
	}
}
