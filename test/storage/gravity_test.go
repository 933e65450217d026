package storage

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestDataGravity: a replica whose volume is on milan stays with it. With
// the virtual node milan cordoned, the deleted replica's new pod stays
// Pending, though rome's real node has room for it, because its volume's
// PV pins it to milan; uncordoned, it runs on milan again and reads what
// the old pod wrote.
func TestDataGravity(t *testing.T) {
	ctx := realpods.Timeout(t, 3*time.Minute)
	peer(ctx, t)
	ns := realpods.Namespace(ctx, t, rome, "gravity")
	// The default strategy: the pods may run on rome's real node too, so
	// only the volume keeps the new pod off it.
	if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "2m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	cs := rome.Client()

	// The first pod goes to milan because rome's real nodes are cordoned
	// while it is scheduled; its volume is then bound there.
	uncordonReal := cordon(ctx, t, rome, rome.RealNodeNames()...)
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, dbStatefulSet(ns, 1), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	first := realpods.RunningPods(ctx, t, rome, ns, "app=db", 1)[0]
	if first.Spec.NodeName != "milan" {
		t.Fatalf("db-0 runs on %s; want the virtual node milan (rome's real nodes are cordoned)", first.Spec.NodeName)
	}
	uncordonReal()
	content := fmt.Sprintf("gravity-%d", time.Now().UnixNano())
	writeData(ctx, t, ns, first.Name, content)

	uncordonMilan := cordon(ctx, t, rome, "milan")
	if err := cs.CoreV1().Pods(ns).Delete(ctx, first.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	// The scheduler tried the new pod on every node and says why none fits:
	// milan is cordoned, rome's real node is not where the volume is.
	var pending *corev1.Pod
	harness.Eventually(ctx, t, "the new db-0 unschedulable for its volume", func() (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, first.Name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.UID == first.UID {
			return false, fmt.Errorf("the old db-0 still there: deleted at %v, finalizers %v, phase %s, %s", p.DeletionTimestamp, p.Finalizers, p.Status.Phase, p.Status.Message)
		}
		pending = p
		for _, c := range p.Status.Conditions {
			if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
				strings.Contains(c.Message, "didn't match PersistentVolume's node affinity") {
				return true, nil
			}
		}
		return false, fmt.Errorf("db-0 on node %q, phase %s, conditions %+v", p.Spec.NodeName, p.Status.Phase, p.Status.Conditions)
	})
	// And it stays so: no node takes it while milan is cordoned.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, first.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if p.UID != pending.UID || p.Spec.NodeName != "" || p.Status.Phase != corev1.PodPending {
			t.Fatalf("with milan cordoned, db-0 (%s) went to node %q, phase %s; want it Pending", p.UID, p.Spec.NodeName, p.Status.Phase)
		}
		time.Sleep(time.Second)
	}

	uncordonMilan()
	again := realpods.RunningPods(ctx, t, rome, ns, "app=db", 1)[0]
	if again.UID != pending.UID || again.Spec.NodeName != "milan" {
		t.Fatalf("once milan is uncordoned db-0 (%s) runs on %s; want the pending pod %s on milan", again.UID, again.Spec.NodeName, pending.UID)
	}
	if got := readData(ctx, t, ns, again.Name); got != content {
		t.Errorf("db-0 back on milan reads %q, want %q written before", got, content)
	}
}

// cordon marks nodes of c unschedulable and returns what uncordons them,
// which also runs when the test ends (the testbed is shared).
func cordon(ctx context.Context, t *testing.T, c *testbed.Cluster, nodes ...string) func() {
	t.Helper()
	if out, err := realpods.Kubectl(ctx, c, append([]string{"cordon"}, nodes...)...); err != nil {
		t.Fatalf("cordon: %v\n%s", err, out)
	}
	done := false
	uncordon := func() {
		if done {
			return
		}
		done = true
		if out, err := realpods.Kubectl(context.Background(), c, append([]string{"uncordon"}, nodes...)...); err != nil {
			t.Errorf("uncordon: %v\n%s", err, out)
		}
	}
	t.Cleanup(uncordon)
	return uncordon
}

// writeData writes content to /data/f in pod.
func writeData(ctx context.Context, t *testing.T, ns, pod, content string) {
	t.Helper()
	if out, err := realpods.Kubectl(ctx, rome, "exec", "-n", ns, pod, "--", "sh", "-c", "echo "+content+" > /data/f"); err != nil {
		t.Fatalf("writing in %s: %v\n%s", pod, err, out)
	}
}

// readData reads /data/f in pod, retrying while exec is not yet possible.
func readData(ctx context.Context, t *testing.T, ns, pod string) string {
	t.Helper()
	var got string
	harness.Eventually(ctx, t, "the content of "+pod+"'s volume", func() (bool, error) {
		out, err := realpods.Kubectl(ctx, rome, "exec", "-n", ns, pod, "--", "cat", "/data/f")
		got = strings.TrimSpace(out)
		return err == nil, err
	})
	return got
}
