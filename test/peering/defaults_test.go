package peering

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/offloading"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/test/harness"
)

// TestDefaultPeeringSharesEphemeralStorage: a peering naming no ephemeral
// storage gets the seed's 20Gi on its virtual node, so a pod asking for
// ephemeral storage (a request, a limit, a sized emptyDir) runs offloaded;
// one asking for more than the virtual node has is not scheduled there.
func TestDefaultPeeringSharesEphemeralStorage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	peer(t, "rome", "milan")
	checkVirtualNode(t, "rome", "milan", "4", "8Gi", "110")
	n := waitNode(t, "rome", "milan", "ephemeral-storage 20Gi", func(n *corev1.Node) bool {
		q := n.Status.Allocatable[corev1.ResourceEphemeralStorage]
		return q.Cmp(resource.MustParse("20Gi")) == 0
	})
	t.Logf("virtual node milan on rome: ephemeral-storage %s", n.Status.Capacity.Name(corev1.ResourceEphemeralStorage, resource.BinarySI))

	rome := clusterClient(t, "rome")
	ns := "ephemeral-default"
	offloadWith(ctx, t, rome, ns, "--pod-offloading-strategy", "Remote", "--selector", consts.RemoteClusterIDLabel+"=milan")
	unoffloadAtEnd(t, ns)
	pod := func(name, request, limit string) *corev1.Pod {
		return &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
			Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "app", Image: "busybox", Command: []string{"sleep", "3600"},
					Resources: corev1.ResourceRequirements{
						Requests: corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(request)},
						Limits:   corev1.ResourceList{corev1.ResourceEphemeralStorage: resource.MustParse(limit)}},
					VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}}},
				Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{
					EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: resource.NewQuantity(1<<30, resource.BinarySI)}}}},
			},
		}
	}
	fits, tooBig := pod("scratch", "1Gi", "2Gi"), pod("too-big", "30Gi", "30Gi")
	for _, p := range []*corev1.Pod{fits, tooBig} {
		if err := rome.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	local, remote, provider := waitOffloaded(ctx, t, rome, ns, fits.Name)
	if provider != "milan" {
		t.Errorf("pod offloaded to %s, want milan", provider)
	}
	if got := remote.Spec.Containers[0].Resources.Requests[corev1.ResourceEphemeralStorage]; got.Cmp(resource.MustParse("1Gi")) != 0 {
		t.Errorf("remote pod's ephemeral-storage request = %s, want the local 1Gi", got.String())
	}
	t.Logf("pod %s runs on %s, remotely on %s", local.Name, local.Spec.NodeName, remote.Spec.NodeName)

	// The virtual node bounds what its pods take: 30Gi is more than the
	// 20Gi granted, and the scheduler says so.
	cs := tb.Cluster("rome").Client()
	var last string
	harness.Eventually(ctx, t, "too-big refused by the scheduler for its ephemeral storage", func() (bool, error) {
		list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{FieldSelector: "involvedObject.name=too-big,reason=FailedScheduling"})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			last = e.Message
			if strings.Contains(e.Message, "Insufficient ephemeral-storage") {
				return true, nil
			}
		}
		return false, nil
	})
	t.Logf("too-big: %s", last)
	if err := rome.Get(ctx, client.ObjectKeyFromObject(tooBig), tooBig); err != nil {
		t.Fatal(err)
	}
	if tooBig.Spec.NodeName != "" {
		t.Errorf("too-big was bound to %s", tooBig.Spec.NodeName)
	}
}

// nodePortService is a NodePort Service of ports ports, forced to keep its
// node ports remotely when force is set.
func nodePortService(ns, name string, ports int, force bool) *corev1.Service {
	s := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns},
		Spec: corev1.ServiceSpec{Type: corev1.ServiceTypeNodePort, Selector: map[string]string{"app": name}}}
	for i := range ports {
		s.Spec.Ports = append(s.Spec.Ports, corev1.ServicePort{Name: fmt.Sprintf("p%d", i), Port: int32(8080 + i),
			TargetPort: intstr.FromInt32(int32(8080 + i)), Protocol: corev1.ProtocolTCP})
	}
	if force {
		s.Annotations = map[string]string{forge.ForceRemoteNodePortAnnotation: "true"}
	}
	return s
}

// waitRefused waits for the reflection's Event on a local Service saying
// the provider refused its copy, and returns its message.
func waitRefused(ctx context.Context, t *testing.T, ns, name, want string) string {
	t.Helper()
	cs := tb.Cluster("rome").Client()
	var msg string
	harness.Eventually(ctx, t, "a "+forge.ReasonReflectionRefused+" Event on Service "+name+" naming "+want, func() (bool, error) {
		list, err := cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{
			FieldSelector: "involvedObject.kind=Service,involvedObject.name=" + name + ",reason=" + forge.ReasonReflectionRefused})
		if err != nil {
			return false, err
		}
		for _, e := range list.Items {
			msg = e.Message
			if strings.Contains(e.Message, want) {
				return e.Type == corev1.EventTypeWarning, nil
			}
		}
		return false, nil
	})
	return msg
}

// TestNodePortServices: a NodePort Service annotated
// liqo.io/force-remote-node-port is reflected with the same node port to
// naples, which allows NodePort Services, and within the twin's quota of
// node ports; milan, which allows ClusterIP only, refuses it, and the local
// Service's Events say which setting of milan's refused it.
func TestNodePortServices(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	peer(t, "rome", "milan")
	peer(t, "rome", "naples")
	defer func() {
		if out, err := run(context.Background(), "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["naples"]); err != nil {
			t.Errorf("unpeer rome -> naples: %v\n%s", err, out)
		}
	}()
	rome := clusterClient(t, "rome")

	t.Run("refused where the provider does not allow NodePort", func(t *testing.T) {
		ns := "nodeport-milan"
		twin := offloadWith(ctx, t, rome, ns, "--selector", consts.RemoteClusterIDLabel+"=milan")
		unoffloadAtEnd(t, ns)
		s := nodePortService(ns, "pinned", 1, true)
		if err := rome.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
		msg := waitRefused(ctx, t, ns, s.Name, "--allowed-service-types")
		t.Logf("Event on rome's Service: %s", msg)
		if !strings.Contains(msg, "milan") || !strings.Contains(msg, "NodePort") {
			t.Errorf("the Event names neither the provider nor the type: %s", msg)
		}
		var remote corev1.Service
		if err := clusterClient(t, "milan").Get(ctx, client.ObjectKey{Namespace: twin, Name: s.Name}, &remote); err == nil {
			t.Errorf("milan holds a copy of type %s", remote.Spec.Type)
		}
	})

	t.Run("reflected with the same node port where the provider allows NodePort", func(t *testing.T) {
		ns := "nodeport-naples"
		twin := offloadWith(ctx, t, rome, ns, "--selector", consts.RemoteClusterIDLabel+"=naples")
		unoffloadAtEnd(t, ns)
		naples := clusterClient(t, "naples")
		// Allowing NodePort gave each twin node ports to spend, not an
		// unbounded number.
		var rq corev1.ResourceQuota
		harness.Eventually(ctx, t, "the twin's ResourceQuota on naples", func() (bool, error) {
			err := naples.Get(ctx, client.ObjectKey{Namespace: twin, Name: offloading.TwinQuotaName}, &rq)
			return err == nil, client.IgnoreNotFound(err)
		})
		if got := rq.Spec.Hard[corev1.ResourceServicesNodePorts]; got.Value() != offloading.DefaultTwinNodePorts {
			t.Errorf("twin quota services.nodeports = %s, want %d", got.String(), offloading.DefaultTwinNodePorts)
		}

		pinned, free := nodePortService(ns, "pinned", 1, true), nodePortService(ns, "free", 1, false)
		for _, s := range []*corev1.Service{pinned, free} {
			if err := rome.Create(ctx, s); err != nil {
				t.Fatal(err)
			}
		}
		var remote corev1.Service
		harness.Eventually(ctx, t, "the pinned Service on naples", func() (bool, error) {
			err := naples.Get(ctx, client.ObjectKey{Namespace: twin, Name: pinned.Name}, &remote)
			return err == nil, client.IgnoreNotFound(err)
		})
		if remote.Spec.Type != corev1.ServiceTypeNodePort || remote.Spec.Ports[0].NodePort != pinned.Spec.Ports[0].NodePort {
			t.Errorf("naples' copy: %s with node port %d, want NodePort with rome's %d", remote.Spec.Type, remote.Spec.Ports[0].NodePort,
				pinned.Spec.Ports[0].NodePort)
		}
		t.Logf("node port %d on rome and naples", remote.Spec.Ports[0].NodePort)
		harness.Eventually(ctx, t, "the unpinned Service on naples, with a node port of its own", func() (bool, error) {
			err := naples.Get(ctx, client.ObjectKey{Namespace: twin, Name: free.Name}, &remote)
			return err == nil && remote.Spec.Ports[0].NodePort != 0, client.IgnoreNotFound(err)
		})

		// Two node ports are taken: ten more exceed the twin's quota, and
		// the local Service is told.
		many := nodePortService(ns, "many", offloading.DefaultTwinNodePorts, false)
		if err := rome.Create(ctx, many); err != nil {
			t.Fatal(err)
		}
		msg := waitRefused(ctx, t, ns, many.Name, "exceeded quota")
		t.Logf("Event on rome's Service: %s", msg)
		if !strings.Contains(msg, "--twin-namespace-quota") {
			t.Errorf("the Event does not name the provider's setting: %s", msg)
		}
	})
}

// unoffloadAtEnd unoffloads ns when the test ends, so that the tests after
// it (TestOffloading waits for rome's maps to list nothing) start from
// maps without it.
func unoffloadAtEnd(t *testing.T, ns string) {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		if out, err := run(ctx, "unoffload", "namespace", ns, "--kubeconfig", kubeconfigs["rome"], "--timeout", "90s"); err != nil {
			t.Errorf("unoffload namespace %s: %v\n%s", ns, err, out)
		}
	})
}
