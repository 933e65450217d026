package realnodes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/testbed/hostpath"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestDefaultStorage: a PVC of the cluster's default class binds when its
// first pod is scheduled, to a hostPath volume on that pod's real node;
// a file written by one pod is read by the next; deleting the PVC deletes
// the volume and its directory.
func TestDefaultStorage(t *testing.T) {
	ctx := realpods.Timeout(t, 4*time.Minute)
	c := east
	cs := c.Client()
	class, err := cs.StorageV1().StorageClasses().Get(ctx, hostpath.ClassName, metav1.GetOptions{})
	if err != nil || class.Annotations["storageclass.kubernetes.io/is-default-class"] != "true" {
		t.Fatalf("default StorageClass %s: %v, %v", hostpath.ClassName, class, err)
	}
	ns := realpods.Namespace(ctx, t, c, "storage")
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns}, Spec: corev1.PersistentVolumeClaimSpec{
		AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Mi")}},
	}}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	run := func(name, script string) string {
		t.Helper()
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Spec: corev1.PodSpec{
			NodeSelector: realpods.OnRealNodes, RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sh", "-c", script},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
		}}
		if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "pod "+name+" to succeed", func() (bool, error) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil || p.Status.Phase == corev1.PodFailed {
				return false, err
			}
			pod = p
			return p.Status.Phase == corev1.PodSucceeded, nil
		})
		out, err := realpods.Kubectl(ctx, c, "logs", "-n", ns, name)
		if err != nil {
			t.Fatalf("logs of %s: %v", name, err)
		}
		return strings.TrimSpace(out) + "@" + pod.Spec.NodeName
	}
	first := run("writer", "echo kept > /data/file && cat /data/file")
	second := run("reader", "cat /data/file")
	if first != second || !strings.HasPrefix(first, "kept@") {
		t.Errorf("the writer saw %q, the reader %q; want the same content on the same node", first, second)
	}
	got, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
	if err != nil || got.Status.Phase != corev1.ClaimBound || *got.Spec.StorageClassName != hostpath.ClassName {
		t.Fatalf("the PVC: %v, %v", got, err)
	}
	pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, got.Spec.VolumeName, metav1.GetOptions{})
	if err != nil || pv.Spec.HostPath == nil || pv.Spec.NodeAffinity == nil {
		t.Fatalf("the PV: %v, %v", pv, err)
	}
	node := strings.SplitN(first, "@", 2)[1]
	if want := filepath.Join(c.Dir, "volumes", node, pv.Name); pv.Spec.HostPath.Path != want {
		t.Errorf("the PV's path is %s, want %s", pv.Spec.HostPath.Path, want)
	}
	if data, err := os.ReadFile(filepath.Join(pv.Spec.HostPath.Path, "file")); err != nil || string(data) != "kept\n" {
		t.Errorf("the file on the host: %q, %v", data, err)
	}

	for _, name := range []string{"writer", "reader"} {
		if err := cs.CoreV1().Pods(ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "data", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the PV and its directory to go", func() (bool, error) {
		_, err := cs.CoreV1().PersistentVolumes().Get(ctx, pv.Name, metav1.GetOptions{})
		_, statErr := os.Stat(pv.Spec.HostPath.Path)
		return apierrors.IsNotFound(err) && os.IsNotExist(statErr), nil
	})
}
