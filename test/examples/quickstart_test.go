package examples

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/test/realpods"
)

// TestQuickStart: both web servers Running, hello-remote on the virtual
// node milan and its pod really running in milan's twin namespace; a pod of
// rome's fetches both pages by address and, through the Service, is
// answered by both.
func TestQuickStart(t *testing.T) {
	ctx := realpods.Timeout(t, 4*time.Minute)
	out := script(ctx, t, "quick-start", "run.sh")
	contains(t, "run.sh", out, "Offloading of namespace quickstart correctly enabled")

	local, err := rome.Client().CoreV1().Pods("quickstart").Get(ctx, "hello-local", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	remote, err := rome.Client().CoreV1().Pods("quickstart").Get(ctx, "hello-remote", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if remote.Spec.NodeName != "milan" || local.Spec.NodeName == "milan" {
		t.Errorf("hello-local runs on %q, hello-remote on %q; want hello-remote on the virtual node milan only", local.Spec.NodeName, remote.Spec.NodeName)
	}
	// The remote pod's twin runs in milan, on its real node.
	twin, err := milan.Client().CoreV1().Pods("quickstart-rome").Get(ctx, "hello-remote", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the remote pod in milan's twin namespace: %v", err)
	}
	if twin.Status.Phase != "Running" {
		t.Errorf("hello-remote in milan is %s, want Running", twin.Status.Phase)
	}
	// Each page is the name of the pod that served it: the pod-address
	// section fetched both, the Service section was answered by both.
	_, afterIPs, _ := strings.Cut(out, "Pod connectivity")
	byIP, byService, _ := strings.Cut(afterIPs, "Service connectivity")
	contains(t, "the fetches by pod address", byIP, "\nhello-local\n", "\nhello-remote\n")
	contains(t, "the fetches through the Service", byService, "\nhello-local\n", "\nhello-remote\n")
	contains(t, "kubectl describe service", byIP, "Endpoints:")

	script(ctx, t, "quick-start", "teardown.sh")
	if _, err := milan.Client().CoreV1().Namespaces().Get(ctx, "quickstart-rome", metav1.GetOptions{}); err == nil {
		// Deletion may still be in progress: Terminating is fine.
		ns, _ := milan.Client().CoreV1().Namespaces().Get(ctx, "quickstart-rome", metav1.GetOptions{})
		if ns != nil && ns.DeletionTimestamp == nil {
			t.Errorf("milan's twin namespace quickstart-rome is still there after unoffload")
		}
	}
}
