//go:build faults

package faults

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/test/harness"
)

// killedPods is how many pods naples offloads while its manager is killed.
const killedPods = 1000

// TestConsumerManagerKilled SIGKILLs naples' controller manager while it
// offloads a Deployment of 1,000 pods to milan, once milan holds between a
// tenth and a half of the ShadowPods. The supervisor starts the manager
// again (as a kubelet restarts its container); afterwards every one of the
// 1,000 local pods is Running on the virtual node, and milan holds exactly
// 1,000 ShadowPods and 1,000 pods, one for each local pod (none lost, none
// duplicated, none left over). The figures are printed.
func TestConsumerManagerKilled(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	ns := "killed"
	twin := ns + "-naples"
	remote, err := client.New(milan.Config, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	start := peerAndOffload(ctx, t, naples, ns, deployment(ns, killedPods),
		"--pods", fmt.Sprint(killedPods+10), "--cpu", "20", "--memory", "40Gi")

	// Mid-offload: between a tenth and a half of the ShadowPods made.
	var atKill int
	harness.Eventually(ctx, t, "a tenth of the ShadowPods on milan", func() (bool, error) {
		var list offv1beta1.ShadowPodList
		if err := remote.List(ctx, &list, client.InNamespace(twin)); err != nil {
			return false, err
		}
		atKill = len(list.Items)
		return atKill >= killedPods/10, nil
	})
	pid := naples.PIDs()[managerName]
	if pid == 0 {
		t.Fatal("naples' controller manager is not running")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now()
	t.Logf("SIGKILLed naples' controller manager (pid %d) %s after the Deployment's create, with %d ShadowPods on milan",
		pid, killedAt.Sub(start).Round(100*time.Millisecond), atKill)
	if atKill >= killedPods/2 {
		t.Errorf("the kill came late: %d ShadowPods already, want it in the middle of the offload", atKill)
	}
	harness.Eventually(ctx, t, "the controller manager started again", func() (bool, error) {
		p := naples.PIDs()[managerName]
		return p != 0 && p != pid, nil
	})

	// After: every local pod Running on the virtual node, one ShadowPod
	// and one pod on milan for each, nothing else.
	var local corev1.PodList
	harness.Eventually(ctx, t, fmt.Sprintf("%d local pods Running on the virtual node", killedPods), func() (bool, error) {
		list, err := naples.Client().CoreV1().Pods(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		local = *list
		running := 0
		for _, p := range local.Items {
			if p.Status.Phase == corev1.PodRunning && p.Spec.NodeName == "milan" && p.DeletionTimestamp.IsZero() {
				running++
			}
		}
		return running == killedPods && len(local.Items) == killedPods, nil
	})
	recovered := time.Since(killedAt)
	// A ShadowPod counts for its local pod by name and by the UID it
	// records: one made for an earlier pod of the same name would not.
	want := map[string]bool{}
	for _, p := range local.Items {
		want[p.Name+"/"+string(p.UID)] = true
	}
	var shadows offv1beta1.ShadowPodList
	var pods corev1.PodList
	if err := remote.List(ctx, &shadows, client.InNamespace(twin)); err != nil {
		t.Fatal(err)
	}
	if err := remote.List(ctx, &pods, client.InNamespace(twin)); err != nil {
		t.Fatal(err)
	}
	lost, extraShadows := diffNames(want, shadowNames(shadows.Items))
	_, extraPods := diffNames(names(local.Items), podNames(pods.Items))
	t.Logf("consumer manager killed mid-offload of %d pods: all Running %s after the kill (%s after the create); milan: %d ShadowPods, %d pods; "+
		"local pods without a ShadowPod: %d, ShadowPods or pods without a local pod: %d + %d",
		killedPods, recovered.Round(100*time.Millisecond), time.Since(start).Round(100*time.Millisecond),
		len(shadows.Items), len(pods.Items), len(lost), len(extraShadows), len(extraPods))
	if len(shadows.Items) != killedPods || len(pods.Items) != killedPods || len(lost) > 0 || len(extraShadows) > 0 || len(extraPods) > 0 {
		t.Errorf("want exactly one ShadowPod and one pod on milan per local pod; lost %v, extra ShadowPods %v, extra pods %v\nnaples' manager log:\n%s",
			first(lost), first(extraShadows), first(extraPods), proc.TailFile(naples.LogPath(managerName), 30))
	}
}

// diffNames returns the names of want missing from have, and those of
// have not in want; a name twice in have counts as extra.
func diffNames(want map[string]bool, have []string) (missing, extra []string) {
	seen := map[string]bool{}
	for _, n := range have {
		if !want[n] || seen[n] {
			extra = append(extra, n)
		}
		seen[n] = true
	}
	for n := range want {
		if !seen[n] {
			missing = append(missing, n)
		}
	}
	return missing, extra
}

func shadowNames(items []offv1beta1.ShadowPod) []string {
	out := make([]string, 0, len(items))
	for _, sp := range items {
		if sp.DeletionTimestamp.IsZero() {
			out = append(out, sp.Name+"/"+sp.Annotations[forge.LocalUIDAnnotation])
		}
	}
	return out
}

func names(items []corev1.Pod) map[string]bool {
	out := make(map[string]bool, len(items))
	for _, p := range items {
		out[p.Name] = true
	}
	return out
}

func podNames(items []corev1.Pod) []string {
	out := make([]string, 0, len(items))
	for _, p := range items {
		if p.DeletionTimestamp.IsZero() {
			out = append(out, p.Name)
		}
	}
	return out
}

// first is at most the first five of s, for messages.
func first(s []string) []string { return s[:min(5, len(s))] }
