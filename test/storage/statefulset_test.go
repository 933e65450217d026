package storage

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/storage"
	"github.com/liqo-go/liqo/pkg/testbed/hostpath"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestStatefulSet is the storage fabric's acceptance: a StatefulSet with a
// PVC template of class liqo in an offloaded namespace, one replica on
// rome's real node and one on the virtual node milan. The local replica's
// volume is a real PVC of rome's default class; the remote one's a PVC of
// milan's default class in the twin namespace, on milan's real node. Each
// replica writes a file; after its pod is deleted, the new pod lands on
// the same node (data gravity) and reads the same content. Deleting the
// PVCs deletes what backs them on both clusters.
func TestStatefulSet(t *testing.T) {
	ctx := realpods.Timeout(t, 10*time.Minute)
	peer(ctx, t)
	ns := realpods.Namespace(ctx, t, rome, "stateful")
	if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "2m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	twin := ns + "-rome"
	sts := dbStatefulSet(ns, 2)
	// One replica per node: one on rome's real node, one on milan.
	sts.Spec.Template.Spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []corev1.PodAffinityTerm{{
		LabelSelector: sts.Spec.Selector, TopologyKey: corev1.LabelHostname}}}}
	cs := rome.Client()
	if _, err := cs.AppsV1().StatefulSets(ns).Create(ctx, sts, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	nodes := map[string]string{} // pod → node
	for _, p := range realpods.RunningPods(ctx, t, rome, ns, "app=db", 2) {
		nodes[p.Name] = p.Spec.NodeName
	}
	remotePod, localPod := "", ""
	for pod, node := range nodes {
		if node == "milan" {
			remotePod = pod
		} else {
			localPod = pod
		}
	}
	if remotePod == "" || localPod == "" {
		t.Fatalf("the replicas run on %v; want one on the virtual node milan and one on a real node", nodes)
	}

	// What backs each volume.
	pvOf := func(pod string) *corev1.PersistentVolume {
		pvc, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data-"+pod, metav1.GetOptions{})
		if err != nil || pvc.Status.Phase != corev1.ClaimBound {
			t.Fatalf("PVC data-%s: %v, %v", pod, pvc, err)
		}
		pv, err := cs.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return pv
	}
	if pv := pvOf(remotePod); pv.Annotations[consts.RemoteClusterAnnotation] != "milan" || pv.Annotations[consts.RemoteNamespaceAnnotation] != twin {
		t.Errorf("the remote replica's PV %s: annotations %v", pv.Name, pv.Annotations)
	}
	remotePVC, err := milan.Client().CoreV1().PersistentVolumeClaims(twin).Get(ctx, "data-"+remotePod, metav1.GetOptions{})
	if err != nil || remotePVC.Status.Phase != corev1.ClaimBound || ptr.Deref(remotePVC.Spec.StorageClassName, "") != hostpath.ClassName {
		t.Fatalf("milan's PVC data-%s in %s: %v, %v; want it Bound, of milan's default class", remotePod, twin, remotePVC, err)
	}
	realPV, err := milan.Client().CoreV1().PersistentVolumes().Get(ctx, remotePVC.Spec.VolumeName, metav1.GetOptions{})
	if err != nil || realPV.Spec.HostPath == nil {
		t.Fatalf("milan's PV behind the remote volume: %v, %v", realPV, err)
	}
	localPV := pvOf(localPod)
	realKey := localPV.Annotations[consts.RealPVCAnnotation]
	realNS, realName, _ := strings.Cut(realKey, "/")
	realPVC, err := cs.CoreV1().PersistentVolumeClaims(realNS).Get(ctx, realName, metav1.GetOptions{})
	if err != nil || realNS != storage.DefaultNamespace || realPVC.Status.Phase != corev1.ClaimBound ||
		ptr.Deref(realPVC.Spec.StorageClassName, "") != hostpath.ClassName || localPV.Spec.HostPath == nil {
		t.Fatalf("the real PVC %q behind the local replica's volume: %v, %v", realKey, realPVC, err)
	}

	// What happens to the remote volume on milan shows on the local PVC:
	// milan's Events about its PVC are copied onto it.
	harness.Eventually(ctx, t, "an Event of milan's PVC on the local PVC data-"+remotePod, func() (bool, error) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.kind=PersistentVolumeClaim,involvedObject.name=data-" + remotePod})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if e.Source.Host == "milan" {
				return true, nil
			}
		}
		return false, nil
	})

	// Each replica writes; its replacement reads it back, on the same node.
	content := map[string]string{}
	for pod := range nodes {
		content[pod] = fmt.Sprintf("%s-%d", pod, time.Now().UnixNano())
		writeData(ctx, t, ns, pod, content[pod])
	}
	for pod := range nodes {
		old, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := cs.CoreV1().Pods(ns).Delete(ctx, pod, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		harness.Eventually(ctx, t, "a new "+pod+" Running", func() (bool, error) {
			p, err := cs.CoreV1().Pods(ns).Get(ctx, pod, metav1.GetOptions{})
			return err == nil && p.UID != old.UID && p.Status.Phase == corev1.PodRunning, nil
		})
	}
	for _, p := range realpods.RunningPods(ctx, t, rome, ns, "app=db", 2) {
		if p.Spec.NodeName != nodes[p.Name] {
			t.Errorf("%s came back on %s, not %s where its volume is", p.Name, p.Spec.NodeName, nodes[p.Name])
		}
		if got := readData(ctx, t, ns, p.Name); got != content[p.Name] {
			t.Errorf("%s reads %q, want %q, written before its pod was replaced", p.Name, got, content[p.Name])
		}
	}

	// Deleting the StatefulSet and its PVCs deletes what backs them.
	if err := cs.AppsV1().StatefulSets(ns).Delete(ctx, "db", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	for pod := range nodes {
		if err := cs.CoreV1().PersistentVolumeClaims(ns).Delete(ctx, "data-"+pod, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	harness.Eventually(ctx, t, "the remote PVC and the real PVC deleted", func() (bool, error) {
		_, err1 := milan.Client().CoreV1().PersistentVolumeClaims(twin).Get(ctx, remotePVC.Name, metav1.GetOptions{})
		_, err2 := cs.CoreV1().PersistentVolumeClaims(realNS).Get(ctx, realName, metav1.GetOptions{})
		return apierrors.IsNotFound(err1) && apierrors.IsNotFound(err2), nil
	})
}

// TestUnknownRemoteClass: a PVC whose liqo.io/remote-storage-class names a
// class the provider does not offer stays Pending, and its Events say
// which classes the provider offers (from its ResourceSlice, copied to the
// VirtualNode).
func TestUnknownRemoteClass(t *testing.T) {
	ctx := realpods.Timeout(t, 5*time.Minute)
	peer(ctx, t)
	harness.Eventually(ctx, t, "the VirtualNode milan with milan's storage classes", func() (bool, error) {
		out, err := realpods.Kubectl(ctx, rome, "get", "virtualnode", "-n", "liqo-tenant-milan", "milan", "-o", "jsonpath={.spec.storageClasses}")
		return err == nil && strings.Contains(out, `"storageClassName":"standard"`) && strings.Contains(out, `"default":true`) &&
			!strings.Contains(out, `"`+storage.DefaultVirtualClass+`"`), nil
	})
	ns := realpods.Namespace(ctx, t, rome, "gold")
	if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--pod-offloading-strategy", "Remote", "--timeout", "2m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	cs := rome.Client()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns,
		Annotations: map[string]string{consts.RemoteStorageClassAnnotation: "gold"}}, Spec: liqoClaim()}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, userOf(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "an Event on the PVC naming the classes milan offers", func() (bool, error) {
		evs, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=data"})
		if err != nil {
			return false, err
		}
		for _, e := range evs.Items {
			if strings.Contains(e.Message, `offers no storage class "gold"`) && strings.Contains(e.Message, "standard (default)") {
				return true, nil
			}
		}
		return false, nil
	})
	got, err := cs.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "data", metav1.GetOptions{})
	if err != nil || got.Status.Phase != corev1.ClaimPending {
		t.Errorf("the PVC: %v, %v; want it Pending", got.Status.Phase, err)
	}
	if _, err := milan.Client().CoreV1().PersistentVolumeClaims(ns+"-rome").Get(ctx, "data", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("a PVC was made on milan anyway (%v)", err)
	}
}

// TestRemoteVolumesKeptOnUnoffload: while a PVC of an offloaded namespace
// has its volume on the provider, unoffload and unpeer refuse, naming it
// (they would delete the twin namespace with the data); with
// --delete-remote-volumes unoffload goes ahead and the remote PVC goes.
func TestRemoteVolumesKeptOnUnoffload(t *testing.T) {
	ctx := realpods.Timeout(t, 5*time.Minute)
	peer(ctx, t)
	ns := realpods.Namespace(ctx, t, rome, "kept")
	if out, err := run(ctx, "offload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--pod-offloading-strategy", "Remote", "--timeout", "2m"); err != nil {
		t.Fatalf("offload: %v\n%s", err, out)
	}
	cs := rome.Client()
	pvc := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: ns}, Spec: liqoClaim()}
	if _, err := cs.CoreV1().PersistentVolumeClaims(ns).Create(ctx, pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, userOf(ns), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	realpods.RunningPods(ctx, t, rome, ns, "app=user", 1)

	named := ns + "/data (on milan)"
	out, err := run(ctx, "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "1m")
	if err == nil || !strings.Contains(err.Error(), named) || !strings.Contains(err.Error(), "--delete-remote-volumes") {
		t.Fatalf("unoffload with a remote volume: %v; want a refusal naming %s\n%s", err, named, out)
	}
	out, err = run(ctx, "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"], "--timeout", "1m", "--delete-namespaces")
	if err == nil || !strings.Contains(err.Error(), named) {
		t.Fatalf("unpeer with a remote volume: %v; want a refusal naming %s\n%s", err, named, out)
	}
	twin := ns + "-rome"
	if _, err := milan.Client().CoreV1().PersistentVolumeClaims(twin).Get(ctx, "data", metav1.GetOptions{}); err != nil {
		t.Fatalf("the remote PVC after the refusals: %v", err)
	}
	if out, err := run(ctx, "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--delete-remote-volumes", "--timeout", "2m"); err != nil {
		t.Fatalf("unoffload --delete-remote-volumes: %v\n%s", err, out)
	}
	harness.Eventually(ctx, t, "the twin namespace, with the remote PVC, gone", func() (bool, error) {
		_, err := milan.Client().CoreV1().Namespaces().Get(ctx, twin, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
}

// peer peers rome with milan, with the network fabric (move volume copies
// through it); a peering that exists already is left as it is.
func peer(ctx context.Context, t *testing.T) {
	t.Helper()
	if out, err := run(ctx, "peer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["milan"],
		"--server-service-type", "NodePort", "--timeout", "5m"); err != nil {
		t.Fatalf("peer: %v\n%s", err, out)
	}
}

// liqoClaim is a 10Mi ReadWriteOnce claim of the virtual class.
func liqoClaim() corev1.PersistentVolumeClaimSpec {
	return corev1.PersistentVolumeClaimSpec{
		StorageClassName: ptr.To(storage.DefaultVirtualClass),
		AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("10Mi")}},
	}
}

// dbStatefulSet is StatefulSet db (pods app=db, started in parallel), each
// replica mounting its PVC data-db-N of class liqo at /data.
func dbStatefulSet(ns string, replicas int32) *appsv1.StatefulSet {
	labels := map[string]string{"app": "db"}
	return &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: ns}, Spec: appsv1.StatefulSetSpec{
		Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
		PodManagementPolicy: appsv1.ParallelPodManagement,
		Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
			TerminationGracePeriodSeconds: ptr.To[int64](1),
			Containers: []corev1.Container{{Name: "db", Image: "busybox", Command: []string{"sleep", "3600"},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
		}},
		VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: liqoClaim()}},
	}}
}

// userOf is pod user (label app=user), mounting PVC data of ns.
func userOf(ns string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "user", Namespace: ns, Labels: map[string]string{"app": "user"}}, Spec: corev1.PodSpec{
		TerminationGracePeriodSeconds: ptr.To[int64](1),
		Containers: []corev1.Container{{Name: "c", Image: "busybox", Command: []string{"sleep", "3600"},
			VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}},
	}}
}
