//go:build faults

package faults

import (
	"context"
	"encoding/json"
	"fmt"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

const replicas = 10

// TestProviderOutages takes milan away from rome while rome runs a
// Deployment of 10 pods offloaded there: first milan's API server frozen
// (SIGSTOP) for 60 s, then rome partitioned from milan for 330 s, beyond
// the pods' default not-ready toleration of 300 s. Throughout, no local pod
// is deleted or replaced (no bulk repatriation after a glitch: the virtual
// node stays Ready for the grace, taking no new pod), and after each
// outage the virtual node reconverges, milan still runs the same 10 pods
// and holds exactly 10 ShadowPods. The figures are printed.
func TestProviderOutages(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	ns := "frozen"
	peerAndOffload(ctx, t, rome, ns, deployment(ns, replicas))
	before := waitRunning(ctx, t, ns)
	twin := ns + "-rome"

	// The two outages: milan's API server frozen for a minute, then
	// rome partitioned from milan for longer than the pods' not-ready
	// toleration (milan itself keeps working meanwhile).
	for _, o := range []outage{{
		name: "frozen", length: 60 * time.Second,
		begin: func() (func(), error) {
			pid := milan.PIDs()["kube-apiserver"]
			if pid == 0 {
				return nil, fmt.Errorf("milan's API server is not running")
			}
			if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
				return nil, err
			}
			return func() { _ = syscall.Kill(pid, syscall.SIGCONT) }, nil
		},
	}, {
		name: "partitioned", length: 330 * time.Second,
		begin: func() (func(), error) {
			milanLink.Cut()
			return milanLink.Heal, nil
		},
	}} {
		t.Run(fmt.Sprintf("%s %s", o.name, o.length), func(t *testing.T) {
			remoteBefore := remotePodUIDs(ctx, t, twin)
			end, err := o.begin()
			if err != nil {
				t.Fatal(err)
			}
			ended := false
			finish := func() {
				if !ended {
					ended = true
					end()
				}
			}
			defer finish()
			// Meanwhile: watch rome's pods every 5 s.
			deadline := time.Now().Add(o.length)
			var lost []string
			for time.Now().Before(deadline) {
				lost = append(lost, changed(ctx, t, ns, before)...)
				time.Sleep(5 * time.Second)
			}
			node := nodeOf(ctx, t)
			t.Logf("after %s %s the virtual node is %s", o.length, o.name, readiness(node))
			finish()
			endedAt := time.Now()

			// Reconverged: the virtual node Ready with its network back.
			harness.Eventually(ctx, t, "the virtual node reachable again", func() (bool, error) {
				n := nodeOf(ctx, t)
				return testbed.NodeReady(n) && testbed.NodeCondition(n, corev1.NodeNetworkUnavailable) == corev1.ConditionFalse, nil
			})
			reconverged := time.Since(endedAt)
			after := waitRunning(ctx, t, ns)
			lost = append(lost, changed(ctx, t, ns, before)...)
			remotePods, shadows := countRemote(ctx, t, twin)
			remoteLost := 0
			remoteAfter := remotePodUIDs(ctx, t, twin)
			for name, uid := range remoteBefore {
				if remoteAfter[name] != uid {
					remoteLost++
				}
			}
			t.Logf("%s %s: virtual node reachable %s after the outage ended; rome's pods lost or replaced: %d; milan's pods replaced: %d; "+
				"milan runs %d pods for %d ShadowPods (want %d each)",
				o.name, o.length, reconverged.Round(100*time.Millisecond), len(lost), remoteLost, remotePods, shadows, replicas)
			if len(lost) > 0 || remoteLost > 0 {
				t.Errorf("rome's pods lost or replaced: %v; milan's pods replaced: %d", lost, remoteLost)
			}
			if len(after) != replicas || remotePods != replicas || shadows != replicas {
				t.Errorf("after the outage: %d local pods, %d remote pods, %d ShadowPods, want %d each", len(after), remotePods, shadows, replicas)
			}
			if reconverged > 10*time.Second {
				t.Errorf("the virtual node took %s to reconverge, want within 10 s", reconverged)
			}
		})
	}
}

// outage is a fault between rome and milan: begin starts it and returns
// what ends it.
type outage struct {
	name   string
	length time.Duration
	begin  func() (end func(), err error)
}

// remotePodUIDs lists milan's pods in the twin namespace, UIDs by name.
func remotePodUIDs(ctx context.Context, t *testing.T, twin string) map[string]types.UID {
	t.Helper()
	pods, err := milan.Client().CoreV1().Pods(twin).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]types.UID{}
	for _, p := range pods.Items {
		out[p.Name] = p.UID
	}
	return out
}

// waitRunning waits for the Deployment's pods, all Running on the virtual
// node, and returns their UIDs by name.
func waitRunning(ctx context.Context, t *testing.T, ns string) map[string]types.UID {
	t.Helper()
	var out map[string]types.UID
	harness.Eventually(ctx, t, "the offloaded pods Running", func() (bool, error) {
		pods, err := rome.Client().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=frozen"})
		if err != nil {
			return false, err
		}
		out = map[string]types.UID{}
		for _, p := range pods.Items {
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == "milan" && p.DeletionTimestamp.IsZero() {
				out[p.Name] = p.UID
			}
		}
		return len(out) == replicas && len(pods.Items) == replicas, nil
	})
	return out
}

// changed lists the pods of before that are gone, replaced or being
// deleted on rome.
func changed(ctx context.Context, t *testing.T, ns string, before map[string]types.UID) []string {
	t.Helper()
	pods, err := rome.Client().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=frozen"})
	if err != nil {
		t.Fatal(err)
	}
	now := map[string]corev1.Pod{}
	for _, p := range pods.Items {
		now[p.Name] = p
	}
	var out []string
	for name, uid := range before {
		p, ok := now[name]
		switch {
		case !ok:
			out = append(out, name+" gone")
		case p.UID != uid:
			out = append(out, name+" replaced")
		case !p.DeletionTimestamp.IsZero():
			out = append(out, name+" being deleted")
		}
	}
	return out
}

func nodeOf(ctx context.Context, t *testing.T) *corev1.Node {
	t.Helper()
	n, err := rome.Client().CoreV1().Nodes().Get(ctx, "milan", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func readiness(n *corev1.Node) string {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return fmt.Sprintf("Ready=%s (%s), network unavailable=%s, taints %v", c.Status, c.Reason, testbed.NodeCondition(n, corev1.NodeNetworkUnavailable), n.Spec.Taints)
		}
	}
	return "without a Ready condition"
}

// countRemote counts milan's pods and ShadowPods in the twin namespace.
func countRemote(ctx context.Context, t *testing.T, twin string) (pods, shadows int) {
	t.Helper()
	var podList *corev1.PodList
	harness.Eventually(ctx, t, "milan answering", func() (bool, error) {
		var err error
		podList, err = milan.Client().CoreV1().Pods(twin).List(ctx, metav1.ListOptions{})
		return err == nil, err
	})
	for _, p := range podList.Items {
		if p.DeletionTimestamp.IsZero() {
			pods++
		}
	}
	raw, err := milan.Client().CoreV1().RESTClient().Get().AbsPath("/apis/offloading.liqo.io/v1beta1/namespaces/" + twin + "/shadowpods").DoRaw(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	return pods, len(list.Items)
}

// peerAndOffload peers consumer with milan (extra: more peer flags),
// offloads namespace ns with the Remote strategy and creates dep in it; it
// returns when dep was created.
func peerAndOffload(ctx context.Context, t *testing.T, consumer *testbed.Cluster, ns string, dep *appsv1.Deployment, extra ...string) time.Time {
	t.Helper()
	args := append([]string{"peer", "--kubeconfig", kubeconfigs[consumer.Name], "--remote-kubeconfig", kubeconfigs["milan"],
		"--networking-disabled", "--timeout", "2m"}, extra...)
	if out, err := liqoctl.Execute(ctx, args...); err != nil {
		t.Fatalf("peer: %v\n%s", err, out)
	}
	cs := consumer.Client()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := liqoctl.Execute(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs[consumer.Name],
		"--pod-offloading-strategy", "Remote", "--timeout", "1m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	created := time.Now()
	if _, err := cs.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return created
}

// deployment is a Deployment of busybox pods labelled app=name.
func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: name}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "app", Image: "busybox"}}}},
	}}
}
