package peering

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

// seedPod is the pod of the user's guide (seed 003) for the virtual node,
// verbatim.
const seedPod = `apiVersion: v1
kind: Pod
metadata:
  name: test-offload
  namespace: default
spec:
  nodeSelector:
    liqo.io/type: virtual-node
  tolerations:
  - key: "virtual-node.liqo.io/not-allowed"
    operator: "Exists"
    effect: "NoExecute"     # IMPORTANT: Must be NoExecute, not NoSchedule
  containers:
  - name: app
    image: busybox
    command: ["sh", "-c", "sleep 3600"]
`

// consumerOutage is how long the consumer's components stay down.
const consumerOutage = time.Minute

// TestSeedPod follows the guide: its NamespaceOffloading and pod applied
// with kubectl put the pod on a virtual node, a pod of the same name runs in
// the twin namespace on that provider, and the local pod reports Running.
// The remote pod then survives its own deletion and a minute without the
// consumer's components, and goes with the local pod.
func TestSeedPod(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	peer(t, "rome", "milan")
	// The pod may land on naples, whose API server TestProviderOutage
	// restarted: its simulated nodes were then initialized again by kwok,
	// which once cost them their InternalIP, and kubectl logs failed there
	// with "no preferred addresses found" (testbed
	// TestSimulatedNodeKeepsAddresses). The later tests peer with naples
	// as if it had no consumer: rome lets it go at the end.
	defer func() {
		if out, err := run(context.Background(), "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["naples"]); err != nil {
			t.Errorf("unpeer rome -> naples: %v\n%s", err, out)
		}
	}()
	rome := clusterClient(t, "rome")
	kubectl(t, "rome", seedOffloading, "apply", "-f", "-")
	waitPhase(t, rome, "default", offv1beta1.ReadyOffloadingPhase)
	kubectl(t, "rome", seedPod, "apply", "-f", "-")

	local, remote, provider := waitOffloaded(ctx, t, rome, "default", "test-offload")
	t.Logf("test-offload runs on virtual node %s, remotely on %s", local.Spec.NodeName, remote.Spec.NodeName)
	remoteCl := clusterClient(t, provider)
	twin := remote.Namespace

	t.Run("kubectl logs and exec reach the remote pod", func(t *testing.T) {
		logs := kubectl(t, "rome", "", "logs", "test-offload", "-n", "default")
		if want := tb.Cluster(provider).PodLogLine(); !strings.Contains(logs, want) {
			t.Errorf("kubectl logs printed %q, want the remote pod's line %q", logs, want)
		}
		out := kubectl(t, "rome", "", "exec", "test-offload", "-n", "default", "--", "sh", "-c", "echo ran in $"+testbed.ExecClusterEnv)
		if want := "ran in " + provider; !strings.Contains(out, want) {
			t.Errorf("kubectl exec printed %q, want %q", out, want)
		}
	})

	t.Run("kubectl describe pod shows what happened remotely", func(t *testing.T) {
		// What the provider's kubelet records about its pod (kwok records
		// nothing: the test does, as a kubelet would) is copied onto the
		// local pod; the provider scheduler's assignment is not (the local
		// pod has its own).
		now := time.Now()
		ev := &corev1.Event{}
		ev.Namespace, ev.Name = twin, "test-offload.pulled"
		ev.InvolvedObject = corev1.ObjectReference{Kind: "Pod", APIVersion: "v1", Namespace: twin, Name: remote.Name, UID: remote.UID}
		ev.Reason, ev.Message, ev.Type = "Pulled", "Container image \"busybox\" already present on machine", corev1.EventTypeNormal
		ev.Source.Component, ev.Count = "kubelet", 1
		ev.FirstTimestamp.Time, ev.LastTimestamp.Time = now, now
		if err := remoteCl.Create(ctx, ev); err != nil {
			t.Fatal(err)
		}
		var out string
		harness.Eventually(ctx, t, "the remote kubelet's Event in kubectl describe", func() (bool, error) {
			out = kubectl(t, "rome", "", "describe", "pod", "test-offload", "-n", "default")
			return strings.Contains(out, ev.Message), nil
		})
		if !strings.Contains(out, provider) {
			t.Errorf("kubectl describe does not name the provider %s:\n%s", provider, out)
		}
		if strings.Contains(out, "Successfully assigned "+twin+"/test-offload") {
			t.Errorf("kubectl describe shows the provider scheduler's assignment:\n%s", out)
		}
	})

	t.Run("deleting the remote pod brings it back", func(t *testing.T) {
		if err := remoteCl.Delete(ctx, remote); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "a new remote pod Running", func() (bool, error) {
			var p corev1.Pod
			err := remoteCl.Get(ctx, types.NamespacedName{Namespace: twin, Name: "test-offload"}, &p)
			return err == nil && p.UID != remote.UID && p.Status.Phase == corev1.PodRunning, client.IgnoreNotFound(err)
		})
		if err := remoteCl.Get(ctx, client.ObjectKeyFromObject(remote), remote); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("remote pods keep running while the consumer's components are down", func(t *testing.T) {
		stopManagers["rome"]()
		restarted := false
		defer func() {
			if !restarted {
				startManagers["rome"]()
			}
		}()
		time.Sleep(consumerOutage)
		var p corev1.Pod
		if err := remoteCl.Get(ctx, client.ObjectKeyFromObject(remote), &p); err != nil {
			t.Fatalf("the remote pod after %s without the consumer: %v", consumerOutage, err)
		}
		if p.UID != remote.UID || p.Status.Phase != corev1.PodRunning || !p.DeletionTimestamp.IsZero() {
			t.Errorf("after %s without the consumer the remote pod is %s (uid %s, was %s), want the same pod Running",
				consumerOutage, p.Status.Phase, p.UID, remote.UID)
		}
		startManagers["rome"]()
		restarted = true
		waitManager("rome")
		again, _, _ := waitOffloaded(ctx, t, rome, "default", "test-offload")
		if again.UID != local.UID {
			t.Errorf("the local pod was replaced during the outage (%s → %s)", local.UID, again.UID)
		}
	})

	t.Run("deleting the local pod removes the remote one", func(t *testing.T) {
		kubectl(t, "rome", "", "delete", "pod", "test-offload", "-n", "default", "--wait=true")
		harness.Eventually(ctx, t, "the remote pod gone", func() (bool, error) {
			err := remoteCl.Get(ctx, client.ObjectKeyFromObject(remote), &corev1.Pod{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
		harness.Eventually(ctx, t, "the ShadowPod gone", func() (bool, error) {
			err := remoteCl.Get(ctx, client.ObjectKeyFromObject(remote), &offv1beta1.ShadowPod{})
			return apierrors.IsNotFound(err), client.IgnoreNotFound(err)
		})
	})
}

// waitOffloaded waits until the local pod runs on a virtual node and its
// remote pod runs in the twin namespace of that node's provider, and
// returns both with the provider's name.
func waitOffloaded(ctx context.Context, t *testing.T, rome client.Client, ns, name string) (*corev1.Pod, *corev1.Pod, string) {
	t.Helper()
	var local, remote corev1.Pod
	var provider string
	harness.Eventually(ctx, t, "pod "+name+" Running on a virtual node and remotely", func() (bool, error) {
		if err := rome.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &local); err != nil {
			return false, err
		}
		var node corev1.Node
		if local.Spec.NodeName == "" {
			return false, nil
		}
		if err := rome.Get(ctx, types.NamespacedName{Name: local.Spec.NodeName}, &node); err != nil {
			return false, err
		}
		provider = node.Labels[consts.RemoteClusterIDLabel]
		if node.Labels[consts.TypeLabel] != consts.TypeVirtualNode || provider == "" {
			t.Fatalf("pod %s/%s was scheduled on %s, not on a virtual node", ns, name, node.Name)
		}
		var nsof offv1beta1.NamespaceOffloading
		if err := rome.Get(ctx, types.NamespacedName{Namespace: ns, Name: "offloading"}, &nsof); err != nil {
			return false, err
		}
		err := clusterClient(t, provider).Get(ctx, types.NamespacedName{Namespace: nsof.Status.RemoteNamespaceName, Name: name}, &remote)
		if err != nil {
			return false, err
		}
		return local.Status.Phase == corev1.PodRunning && remote.Status.Phase == corev1.PodRunning &&
			local.Status.PodIP == remote.Status.PodIP, nil
	})
	return &local, &remote, provider
}

func clusterClient(t *testing.T, cluster string) client.Client {
	t.Helper()
	c, err := client.New(tb.Cluster(cluster).Config, client.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}
