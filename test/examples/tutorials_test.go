package examples

import (
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/test/realpods"
)

// TestServiceOffloading: the Service is reflected into milan with no pod
// there, and a pod in either cluster gets the schedule, served by the pod
// in rome.
func TestServiceOffloading(t *testing.T) {
	ctx := realpods.Timeout(t, 4*time.Minute)
	out := script(ctx, t, "service-offloading", "run.sh")
	pods, err := rome.Client().CoreV1().Pods("flights").List(ctx, metav1.ListOptions{LabelSelector: "run=flights-service"})
	if err != nil || len(pods.Items) != 1 {
		t.Fatalf("flights-service pods in rome: %v (%d)", err, len(pods.Items))
	}
	served := `"served_by": "` + pods.Items[0].Name + `"`
	if _, err := milan.Client().CoreV1().Services("flights").Get(ctx, "flights-service", metav1.GetOptions{}); err != nil {
		t.Errorf("the Service in milan: %v", err)
	}
	if remote, err := milan.Client().CoreV1().Pods("flights").List(ctx, metav1.ListOptions{}); err != nil || len(remote.Items) != 0 {
		t.Errorf("pods in milan's flights: %v %d, want none", err, len(remote.Items))
	}
	_, fromRome, _ := strings.Cut(out, "Consume the Service from rome")
	fromRome, fromMilan, _ := strings.Cut(fromRome, "Consume the Service from milan")
	contains(t, "the schedule fetched in rome", fromRome, served, `"LH1234"`)
	contains(t, "the schedule fetched in milan", fromMilan, served, `"LH1234"`)
	script(ctx, t, "service-offloading", "teardown.sh")
}

// TestGlobalIngress (adapted): one podinfo replica in each cluster, the
// Ingress refused by milan with an Event saying why, and both replicas
// answering the Service from either cluster.
func TestGlobalIngress(t *testing.T) {
	ctx := realpods.Timeout(t, 4*time.Minute)
	out := script(ctx, t, "global-ingress", "run.sh")
	pods := realpods.RunningPods(ctx, t, rome, "podinfo", "app.kubernetes.io/name=podinfo", 2)
	var names []string
	onMilan := 0
	for _, p := range pods {
		names = append(names, `{"hostname": "`+p.Name+`"}`)
		if p.Spec.NodeName == "milan" {
			onMilan++
		}
	}
	if onMilan != 1 {
		t.Errorf("%d podinfo replicas on the virtual node milan, want 1", onMilan)
	}
	// milan is a default install: it serves no consumer's Ingress, and
	// the refusal reaches rome's user as an Event naming the settings.
	if _, err := milan.Client().NetworkingV1().Ingresses("podinfo").Get(ctx, "podinfo", metav1.GetOptions{}); err == nil {
		t.Errorf("the Ingress was reflected into milan, whose default policy allows no ingress class")
	}
	contains(t, "the refusal shown in rome", out, "ReflectionRefused", "--allowed-ingress-classes", "k8gb.io/strategy")
	_, fromRome, _ := strings.Cut(out, "From rome, the Service")
	fromRome, fromMilan, _ := strings.Cut(fromRome, "From milan, the same Service")
	contains(t, "the answers in rome", fromRome, names...)
	contains(t, "the answers in milan", fromMilan, names...)
	script(ctx, t, "global-ingress", "teardown.sh")
}

// TestStatefulApplications: one replica in each cluster, each volume bound
// where its pod runs (the remote one a PVC in milan), the rows written
// before the pods were deleted read back after, the pods back on their
// nodes.
func TestStatefulApplications(t *testing.T) {
	ctx := realpods.Timeout(t, 5*time.Minute)
	out := script(ctx, t, "stateful-applications", "run.sh")
	nodes := map[string]string{}
	for _, p := range realpods.RunningPods(ctx, t, rome, "stateful", "app=db", 2) {
		nodes[p.Name] = p.Spec.NodeName
	}
	remote := ""
	for pod, node := range nodes {
		if node == "milan" {
			remote = pod
		}
	}
	if remote == "" || len(nodes) != 2 {
		t.Fatalf("the replicas run on %v; want one on the virtual node milan", nodes)
	}
	// The remote replica's volume is a PVC of milan's, in the twin namespace.
	if pvc, err := milan.Client().CoreV1().PersistentVolumeClaims("stateful").Get(ctx, "data-"+remote, metav1.GetOptions{}); err != nil {
		t.Errorf("the remote volume's PVC in milan: %v", err)
	} else if pvc.Status.Phase != corev1.ClaimBound {
		t.Errorf("the remote volume's PVC in milan is %s", pvc.Status.Phase)
	}
	_, after, _ := strings.Cut(out, "Delete both replicas")
	contains(t, "after the pods were replaced", after, "every replica is back on its node",
		"1,Smith,John,123 Main St,Anytown,written in db-0", "2,Smith,John,123 Main St,Anytown,written in db-1")
	script(ctx, t, "stateful-applications", "teardown.sh")
}

// TestOffloadingWithPolicies: the namespace in naples only, app-south
// Running on the virtual node naples (its pod in naples), app-center
// Pending.
func TestOffloadingWithPolicies(t *testing.T) {
	ctx := realpods.Timeout(t, 4*time.Minute)
	out := script(ctx, t, "offloading-with-policies", "run.sh")
	contains(t, "run.sh", out, "offloadingPhase: Ready", "ClusterNotSelected")
	if _, err := naples.Client().CoreV1().Namespaces().Get(ctx, "policies", metav1.GetOptions{}); err != nil {
		t.Errorf("namespace policies in naples: %v", err)
	}
	if _, err := milan.Client().CoreV1().Namespaces().Get(ctx, "policies", metav1.GetOptions{}); err == nil {
		t.Errorf("namespace policies exists in milan, which the selector excludes")
	}
	pods, err := rome.Client().CoreV1().Pods("policies").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		switch p.Labels["app"] {
		case "app-south":
			if p.Spec.NodeName != "naples" || p.Status.Phase != corev1.PodRunning {
				t.Errorf("app-south's pod is %s on %q, want Running on naples", p.Status.Phase, p.Spec.NodeName)
			}
		case "app-center":
			if p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
				t.Errorf("app-center's pod is %s on %q, want Pending", p.Status.Phase, p.Spec.NodeName)
			}
		}
	}
	if twins, err := naples.Client().CoreV1().Pods("policies").List(ctx, metav1.ListOptions{LabelSelector: "app=app-south"}); err != nil || len(twins.Items) != 1 {
		t.Errorf("app-south's pod in naples: %v", err)
	}
	script(ctx, t, "offloading-with-policies", "teardown.sh")
	if _, err := rome.Client().CoreV1().Nodes().Get(ctx, "naples", metav1.GetOptions{}); err == nil {
		t.Errorf("the virtual node naples is still there after unpeer")
	}
}
