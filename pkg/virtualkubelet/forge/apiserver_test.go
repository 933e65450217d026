package forge

import (
	"net/netip"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
)

func envOf(c corev1.Container, name string) []string {
	var out []string
	for _, e := range c.Env {
		if e.Name == name {
			out = append(out, e.Value)
		}
	}
	return out
}

// TestHomeAPIServer: with the fabric, every container of an offloaded pod
// resolves the in-cluster names to the consumer's API server twin and its
// in-cluster clients are pointed there, except where the user set the
// variables; a user's own alias of those names is replaced, others kept.
func TestHomeAPIServer(t *testing.T) {
	local := seedPod()
	local.Spec.InitContainers = []corev1.Container{{Name: "init", Image: "busybox"}}
	local.Spec.Containers = append(local.Spec.Containers, corev1.Container{Name: "own", Image: "busybox",
		Env: []corev1.EnvVar{{Name: "KUBERNETES_SERVICE_HOST", Value: "example.org"}}})
	local.Spec.HostAliases = []corev1.HostAlias{{IP: "10.0.0.1", Hostnames: []string{"kubernetes.default"}}, {IP: "10.0.0.2", Hostnames: []string{"db"}}}
	before := local.DeepCopy()

	sp := ShadowPod(local, "rome", "default-rome", netip.MustParseAddr("10.70.0.1"))
	spec := sp.Spec.Pod
	want := []corev1.HostAlias{{IP: "10.0.0.2", Hostnames: []string{"db"}}, {IP: "10.70.0.1", Hostnames: APIServerHostnames}}
	if len(spec.HostAliases) != 2 || spec.HostAliases[0].IP != want[0].IP || spec.HostAliases[1].IP != want[1].IP ||
		!slices.Equal(spec.HostAliases[1].Hostnames, APIServerHostnames) {
		t.Errorf("host aliases %+v, want %+v", spec.HostAliases, want)
	}
	for _, c := range append(slices.Clone(spec.InitContainers), spec.Containers[0]) {
		if h, p := envOf(c, "KUBERNETES_SERVICE_HOST"), envOf(c, "KUBERNETES_SERVICE_PORT"); !slices.Equal(h, []string{"kubernetes.default.svc"}) || !slices.Equal(p, []string{"443"}) {
			t.Errorf("container %s: KUBERNETES_SERVICE_HOST %q PORT %q", c.Name, h, p)
		}
	}
	if h := envOf(spec.Containers[1], "KUBERNETES_SERVICE_HOST"); !slices.Equal(h, []string{"example.org"}) {
		t.Errorf("the user's own KUBERNETES_SERVICE_HOST became %q", h)
	}
	if local.Spec.HostAliases[0].IP != before.Spec.HostAliases[0].IP || len(local.Spec.Containers[0].Env) != 0 {
		t.Error("the local pod was modified")
	}

	// Without the fabric nothing is added.
	plain := ShadowPod(seedPod(), "rome", "default-rome", netip.Addr{}).Spec.Pod
	if plain.HostAliases != nil || plain.Containers[0].Env != nil {
		t.Errorf("without an API server address: aliases %v, env %v", plain.HostAliases, plain.Containers[0].Env)
	}
}
