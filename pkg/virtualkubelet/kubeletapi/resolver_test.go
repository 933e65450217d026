package kubeletapi

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// TestPodResolver: the resolver finds the twin of an offloaded pod through
// the consumer's objects, and answers not-found for the pods it cannot
// place, saying why.
func TestPodResolver(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	other := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "not-offloaded"}}
	if err := cl.Create(ctx, other); err != nil {
		t.Fatal(err)
	}
	unscheduled := boundPod(localNS, "unscheduled", "")
	// Nothing matches the selector, so the scheduler leaves it unbound.
	unscheduled.Spec.NodeSelector = map[string]string{"example.com/none": "x"}
	for _, p := range []*corev1.Pod{
		unscheduled,
		boundPod(localNS, "on-a-real-node", "worker-0"),
		boundPod(other.Name, podName, vnodeName),
	} {
		if err := cl.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}

	r := &PodResolver{Reader: cl, Remotes: remotecluster.NewRegistry(cl, remotecluster.Options{})}
	got, err := r.Resolve(ctx, localNS, podName)
	if err != nil {
		t.Fatal(err)
	}
	if got.Node != vnodeName || got.Namespace != twinNS || got.Name != podName || got.Config.Host != provider.Server || got.Config.BearerToken == "" {
		t.Errorf("resolved to node %s, pod %s/%s at %s (token set: %t)", got.Node, got.Namespace, got.Name, got.Config.Host, got.Config.BearerToken != "")
	}

	for _, tc := range []struct{ namespace, name, why string }{
		{localNS, "ghost", "pod apps/ghost not found"},
		{localNS, "unscheduled", "is not scheduled"},
		{localNS, "on-a-real-node", "which is not a virtual node"},
		{other.Name, podName, "namespace not-offloaded has no twin namespace in cluster provider"},
	} {
		_, err := r.Resolve(ctx, tc.namespace, tc.name)
		if !errdefs.IsNotFound(err) || !strings.Contains(err.Error(), tc.why) {
			t.Errorf("%s/%s: %v, want a not-found error saying %q", tc.namespace, tc.name, err, tc.why)
		}
	}
}
