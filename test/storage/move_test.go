package storage

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/images/catalog"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// sumScript prints one digest of every file's path and content under /data.
const sumScript = "cd /data && find . -type f | sort | xargs sha256sum | sha256sum"

// TestMoveVolume: liqoctl move volume takes a volume written on rome's
// real node to milan and back, and each time a pod mounting it runs where
// it went (data gravity) and reads the same files (one digest of their
// paths and contents). It refuses while a pod uses the volume, and while
// an interrupted move's temporary PVC exists; with the fabric down the
// copy fails, clearly, and the PVC stays bound to its source volume with
// the data unchanged.
func TestMoveVolume(t *testing.T) {
	ctx := realpods.Timeout(t, 15*time.Minute)
	peer(ctx, t)
	ns := realpods.Namespace(ctx, t, rome, "move")
	if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "2m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	cs := rome.Client()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns}, Spec: liqoClaim()}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	romeNode := rome.RealNodeNames()[0]
	mover, err := catalog.Lookup(catalog.Mover)
	if err != nil {
		t.Fatal(err)
	}
	move := func(target string, extra ...string) (string, error) {
		return run(ctx, append([]string{"move", "volume", "data", "-n", ns, "--target-node", target, "--kubeconfig", kubeconfigs["rome"],
			"--mover-image", mover.Ref(testbed.TestImageTag), "--timeout", "5m"}, extra...)...)
	}

	// Written on rome's real node; the writer still running, move refuses.
	user := userOf(ns)
	user.Spec.NodeSelector = realpods.OnRealNodes
	node, want := usePVC(ctx, t, ns, user, "mkdir -p /data/d && echo hello > /data/f && head -c 1048576 /dev/urandom > /data/d/big && "+sumScript,
		func() {
			out, err := move("milan")
			if err == nil || !strings.Contains(err.Error(), "in use by pod(s) user") {
				t.Errorf("move with pod user mounting the volume: %v; want a refusal naming it\n%s", err, out)
			}
		})
	if node != romeNode {
		t.Fatalf("the writer ran on %s, want %s", node, romeNode)
	}
	source := boundPV(ctx, t, ns)
	t.Logf("written on %s (PV %s): %s", node, source.Name, want)

	// The fabric down: the movers cannot reach each other.
	netArgs := []string{"--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"]}
	if out, err := run(ctx, append([]string{"network", "disconnect", "--timeout", "2m"}, netArgs...)...); err != nil {
		t.Fatalf("network disconnect: %v\n%s", err, out)
	}
	out, err := move("milan", "--connect-timeout", "20s")
	if err == nil || !strings.Contains(err.Error(), "cannot reach") || !strings.Contains(err.Error(), "data unchanged") {
		t.Errorf("move with the fabric down: %v; want a failure saying the movers could not reach each other and the data is unchanged\n%s", err, out)
	}
	t.Logf("move with the fabric down: %v", err)
	pvcEvent(ctx, t, ns, "VolumeMoveFailed", "data unchanged")
	if pv := boundPV(ctx, t, ns); pv.Name != source.Name {
		t.Errorf("after the failed move the PVC is bound to %s, not to its source volume %s", pv.Name, source.Name)
	}
	if node, got := usePVC(ctx, t, ns, userOf(ns), sumScript, nil); node != romeNode || got != want {
		t.Errorf("after the failed move the volume reads %s on %s; want %s on %s", got, node, want, romeNode)
	}
	// The temporary PVC of an interrupted move may hold the only copy:
	// a new move refuses while it exists.
	stray := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data-liqo-move", Namespace: ns}, Spec: liqoClaim()}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, stray, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if out, err := move("milan"); err == nil || !strings.Contains(err.Error(), "left by an interrupted move") {
		t.Errorf("move with a leftover data-liqo-move: %v; want a refusal\n%s", err, out)
	}
	if err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, stray.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the leftover PVC gone", func() (bool, error) {
		_, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, stray.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})

	if out, err := run(ctx, append([]string{"network", "connect", "--server-service-type", "NodePort", "--timeout", "5m"}, netArgs...)...); err != nil {
		t.Fatalf("network connect: %v\n%s", err, out)
	}

	// To milan: the PVC's volume is there, its pod follows it.
	if out, err := move("milan"); err != nil {
		t.Fatalf("move to milan: %v\n%s", err, out)
	} else {
		t.Logf("move to milan:\n%s", out)
	}
	pvcEvent(ctx, t, ns, "VolumeMoved", "to milan")
	if pv := boundPV(ctx, t, ns); pv.Annotations[consts.RemoteClusterAnnotation] != "milan" {
		t.Errorf("after the move to milan the PV %s has annotations %v", pv.Name, pv.Annotations)
	}
	if node, got := usePVC(ctx, t, ns, userOf(ns), sumScript, nil); node != "milan" || got != want {
		t.Errorf("after the move to milan the volume reads %s on %s; want %s on milan", got, node, want)
	}
	realNS, realName, _ := strings.Cut(source.Annotations[consts.RealPVCAnnotation], "/")
	harness.Eventually(ctx, t, "the source's real PVC deleted", func() (bool, error) {
		_, err := cs.CoreV1().PersistentVolumeClaims(realNS).Get(ctx, realName, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})

	// And back to rome's real node.
	if out, err := move(romeNode); err != nil {
		t.Fatalf("move back to %s: %v\n%s", romeNode, err, out)
	}
	if pv := boundPV(ctx, t, ns); pv.Annotations[consts.RealPVCAnnotation] == "" {
		t.Errorf("after the move back the PV %s has annotations %v", pv.Name, pv.Annotations)
	}
	if node, got := usePVC(ctx, t, ns, userOf(ns), sumScript, nil); node != romeNode || got != want {
		t.Errorf("after the move back the volume reads %s on %s; want %s on %s", got, node, want, romeNode)
	}
	harness.Eventually(ctx, t, "milan's PVC deleted", func() (bool, error) {
		_, err := milan.Client().CoreV1().PersistentVolumeClaims(ns+"-rome").Get(ctx, "data", metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// usePVC runs pod (mounting PVC data) until it runs, runs script in it,
// calls during (if set) while it runs, deletes it and waits until it is
// gone; it returns the pod's node and the script's output.
func usePVC(ctx context.Context, t *testing.T, ns string, pod *corev1.Pod, script string, during func()) (string, string) {
	t.Helper()
	cs := rome.Client()
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	p := realpods.RunningPods(ctx, t, rome, ns, "app="+pod.Labels["app"], 1)[0]
	out, err := realpods.Kubectl(ctx, rome, "exec", "-n", ns, p.Name, "--", "sh", "-c", script)
	if err != nil {
		t.Fatalf("running %q in %s: %v\n%s", script, p.Name, err, out)
	}
	if during != nil {
		during()
	}
	if err := cs.CoreV1().Pods(ns).Delete(ctx, p.Name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "pod "+p.Name+" gone", func() (bool, error) {
		_, err := cs.CoreV1().Pods(ns).Get(ctx, p.Name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	return p.Spec.NodeName, strings.TrimSpace(out)
}

// boundPV is the PV of PVC data, which must be Bound.
func boundPV(ctx context.Context, t *testing.T, ns string) *corev1.PersistentVolume {
	t.Helper()
	cs := rome.Client()
	pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
	if err != nil || pvc.Status.Phase != corev1.ClaimBound {
		t.Fatalf("PVC data: %v, %v; want it Bound", pvc, err)
	}
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return pv
}

// pvcEvent waits for an Event of reason on PVC data whose message holds
// part.
func pvcEvent(ctx context.Context, t *testing.T, ns, reason, part string) {
	t.Helper()
	harness.Eventually(ctx, t, "a "+reason+" Event on PVC data", func() (bool, error) {
		evs, err := rome.Client().CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=PersistentVolumeClaim,involvedObject.name=data,reason=" + reason})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, part) {
				return true, nil
			}
		}
		return false, nil
	})
}
