package peering

import (
	"context"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/test/harness"
)

// TestTenantAdministration: milan's administrator cordons, drains and
// activates rome's Tenant with liqoctl, under a Deployment rome offloads
// there. Cordoned, the running pods stay and a new replica waits, its
// status saying why; uncordoned, it runs. Drained, milan evicts every pod
// (liqoctl waits for it), rome's pods are replaced and the replacements
// say why they wait; activated, they run again.
func TestTenantAdministration(t *testing.T) {
	peer(t, "rome", "milan")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	const ns = "tenant-admin"
	createNamespace(t, ns)
	if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"],
		"--selector", "liqo.io/remote-cluster-id=milan", "--pod-offloading-strategy", "Remote", "--timeout", "1m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	rome := tb.Cluster("rome").Client()
	labels := map[string]string{"app": "admin"}
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "admin", Namespace: ns}, Spec: appsv1.DeploymentSpec{
		Replicas: ptr.To[int32](2), Selector: &metav1.LabelSelector{MatchLabels: labels},
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](0),
			Containers:                    []corev1.Container{{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"}}}}}}}
	if _, err := rome.AppsV1().Deployments(ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// pods waits until rome's pods of the Deployment, n of them, satisfy
	// ok, and returns them.
	pods := func(what string, n int, ok func([]corev1.Pod) bool) []corev1.Pod {
		t.Helper()
		var live []corev1.Pod
		harness.Eventually(ctx, t, what, func() (bool, error) {
			list, err := rome.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=admin"})
			if err != nil {
				return false, err
			}
			live = live[:0]
			for _, p := range list.Items {
				if p.DeletionTimestamp.IsZero() {
					live = append(live, p)
				}
			}
			return len(live) == n && ok(live), nil
		})
		return live
	}
	count := func(ps []corev1.Pod, ok func(*corev1.Pod) bool) int {
		n := 0
		for i := range ps {
			if ok(&ps[i]) {
				n++
			}
		}
		return n
	}
	running := func(p *corev1.Pod) bool { return p.Status.Phase == corev1.PodRunning }
	waitingFor := func(why string) func(*corev1.Pod) bool {
		return func(p *corev1.Pod) bool {
			return p.Status.Phase == corev1.PodPending && strings.Contains(p.Status.Message, why)
		}
	}
	admin := func(args ...string) {
		t.Helper()
		out, err := run(ctx, append(args, "--kubeconfig", kubeconfigs["milan"])...)
		if err != nil {
			t.Fatalf("liqoctl %v: %v\n%s", args, err, out)
		}
		t.Logf("liqoctl %s:\n%s", strings.Join(args, " "), strings.TrimSpace(out))
	}
	scale := func(n int32) {
		t.Helper()
		s, err := rome.AppsV1().Deployments(ns).GetScale(ctx, "admin", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		s.Spec.Replicas = n
		if _, err := rome.AppsV1().Deployments(ns).UpdateScale(ctx, "admin", s, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}

	before := pods("2 replicas Running", 2, func(ps []corev1.Pod) bool { return count(ps, running) == 2 })

	admin("cordon", "tenant", "rome")
	scale(3)
	ps := pods("a new replica waiting for the cordon", 3, func(ps []corev1.Pod) bool {
		return count(ps, running) == 2 && count(ps, waitingFor("Cordoned")) == 1
	})
	for _, p := range ps {
		if waitingFor("Cordoned")(&p) {
			t.Logf("a new pod of a cordoned tenant: %s", p.Status.Message)
		}
	}
	for _, p := range before {
		if !strings.Contains(names(ps), p.Name) {
			t.Errorf("pod %s of the cordoned tenant went", p.Name)
		}
	}

	admin("uncordon", "tenant", "rome")
	pods("3 replicas Running once uncordoned", 3, func(ps []corev1.Pod) bool { return count(ps, running) == 3 })

	admin("drain", "tenant", "rome", "--timeout", "1m")
	remote, err := tb.Cluster("milan").Client().CoreV1().Pods(ns+"-rome").List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range remote.Items {
		if p.DeletionTimestamp.IsZero() && p.Labels[consts.OriginClusterIDLabel] == "rome" {
			t.Errorf("milan still runs %s for a drained tenant", p.Name)
		}
	}
	ps = pods("the replacements waiting for the drain", 3, func(ps []corev1.Pod) bool { return count(ps, waitingFor("Drained")) == 3 })
	t.Logf("a pod of a drained tenant: %s", ps[0].Status.Message)
	events, err := rome.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "reason=RemotePodDeleted"})
	if err != nil || len(events.Items) < 3 {
		t.Errorf("%d RemotePodDeleted Events on rome's evicted pods, want 3 (%v)", len(events.Items), err)
	}

	admin("activate", "tenant", "rome")
	pods("3 replicas Running once activated", 3, func(ps []corev1.Pod) bool { return count(ps, running) == 3 })

	if out, err := run(ctx, "cordon", "tenant", "nobody", "--kubeconfig", kubeconfigs["milan"]); err == nil || !strings.Contains(err.Error(), "no Tenant") {
		t.Errorf("cordoning an unknown consumer: %v\n%s", err, out)
	}

	// The slice peer made (named after the provider) cordoned: it is rome's
	// only one, so a new replica waits, its status naming the slice, and the
	// running ones stay; rome's copy of the slice says it is cordoned.
	admin("cordon", "resourceslice", "milan", "--remote-cluster-id", "rome")
	scale(4)
	const sliceRefusal = "the ResourceSlice milan of consumer rome is cordoned on this provider"
	ps = pods("a new replica waiting for the slice's cordon", 4, func(ps []corev1.Pod) bool {
		return count(ps, running) == 3 && count(ps, waitingFor(sliceRefusal)) == 1
	})
	for _, p := range ps {
		if waitingFor(sliceRefusal)(&p) {
			t.Logf("a new pod on a cordoned slice: %s", p.Status.Message)
		}
	}
	romeCl := clusterClient(t, "rome")
	harness.Eventually(ctx, t, "rome's slice showing the cordon", func() (bool, error) {
		var s authv1beta1.ResourceSlice
		if err := romeCl.Get(ctx, client.ObjectKey{Namespace: consts.TenantNamespace("milan"), Name: "milan"}, &s); err != nil {
			return false, err
		}
		for _, c := range s.Status.Conditions {
			if c.Type == authv1beta1.ResourceSliceResources {
				return c.Status == authv1beta1.ResourceSliceAccepted && c.Reason == "Cordoned", nil
			}
		}
		return false, nil
	})
	admin("uncordon", "resourceslice", "milan", "--remote-cluster-id", "rome")
	pods("4 replicas Running once the slice is uncordoned", 4, func(ps []corev1.Pod) bool { return count(ps, running) == 4 })

	for _, tc := range []struct {
		args []string
		want string
		code int
	}{
		{[]string{"cordon", "resourceslice", "nothing", "--remote-cluster-id", "rome"}, "consumer rome has no ResourceSlice nothing", liqoctl.ExitFailure},
		{[]string{"uncordon", "resourceslice", "milan", "--remote-cluster-id", "Not_An_ID"}, "--remote-cluster-id", liqoctl.ExitUsage},
		{[]string{"cordon", "resourceslice", "milan"}, "remote-cluster-id", liqoctl.ExitUsage},
	} {
		var stdout, stderr strings.Builder
		code := liqoctl.Run(ctx, append(tc.args, "--kubeconfig", kubeconfigs["milan"]), &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("liqoctl %s: exit %d, %q; want exit %d naming %q", strings.Join(tc.args, " "), code, stderr.String(), tc.code, tc.want)
		}
	}
}

func names(ps []corev1.Pod) string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		out = append(out, p.Name)
	}
	return strings.Join(out, " ")
}
