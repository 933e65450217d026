package peering

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/ipam"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowendpointslice"
	"github.com/liqo-go/liqo/test/harness"
)

// flightsApp is the guide's "Offloading a Service" application in the
// spirit of its manifests/app.yaml: a Deployment and its Service.
func flightsApp(ns string, replicas int32) (*appsv1.Deployment, *corev1.Service) {
	labels := map[string]string{"run": "flights-service"}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "flights-service", Namespace: ns},
		Spec: appsv1.DeploymentSpec{Replicas: ptr.To(replicas), Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: corev1.PodSpec{
				Containers: []corev1.Container{{Name: "flights", Image: "flights:latest", Ports: []corev1.ContainerPort{{ContainerPort: 7999}}}},
				// One replica per node, virtual nodes included, when the
				// offloading strategy lets them go there.
				TopologySpreadConstraints: []corev1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: corev1.LabelHostname,
					WhenUnsatisfiable: corev1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}},
			}}},
	}
	s := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "flights-service", Namespace: ns},
		Spec:       corev1.ServiceSpec{Selector: labels, Ports: []corev1.ServicePort{{Port: 7999, TargetPort: intstr.FromInt32(7999), Protocol: corev1.ProtocolTCP}}},
	}
	return d, s
}

// endpoints lists the ready addresses of a Service's EndpointSlices in a
// cluster, split by who made the slice: the cluster's own controller or
// the reflection.
func endpoints(ctx context.Context, c client.Client, ns, svc string) (native, reflected []string, err error) {
	var slices discoveryv1.EndpointSliceList
	if err := c.List(ctx, &slices, client.InNamespace(ns), client.MatchingLabels{discoveryv1.LabelServiceName: svc}); err != nil {
		return nil, nil, err
	}
	for _, s := range slices.Items {
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			// Not our ownership mark: a cluster's own slices inherit the
			// labels of the Service, which on the provider is our copy.
			if s.Labels[discoveryv1.LabelManagedBy] == shadowendpointslice.ManagedBy {
				reflected = append(reflected, e.Addresses...)
			} else {
				native = append(native, e.Addresses...)
			}
		}
	}
	slicesSort(native, reflected)
	return native, reflected, nil
}

func slicesSort(lists ...[]string) {
	for _, l := range lists {
		slices.Sort(l)
	}
}

// runningPods lists the IPs of the Running pods of the app in a cluster,
// split between those on virtual nodes and the others.
func runningPods(ctx context.Context, c client.Client, ns string) (physical, virtual []string, err error) {
	var pods corev1.PodList
	if err := c.List(ctx, &pods, client.InNamespace(ns), client.MatchingLabels{"run": "flights-service"}); err != nil {
		return nil, nil, err
	}
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodRunning || p.Status.PodIP == "" || !p.DeletionTimestamp.IsZero() {
			continue
		}
		var n corev1.Node
		if err := c.Get(ctx, client.ObjectKey{Name: p.Spec.NodeName}, &n); err != nil {
			return nil, nil, err
		}
		if n.Labels[consts.TypeLabel] == consts.TypeVirtualNode {
			virtual = append(virtual, p.Status.PodIP)
		} else {
			physical = append(physical, p.Status.PodIP)
		}
	}
	slicesSort(physical, virtual)
	return physical, virtual, nil
}

// networkInit declares the networks of two clusters to each other
// (liqoctl network init): a provider keeps a consumer's endpoints only at
// the addresses it knows to be that consumer's.
func networkInit(ctx context.Context, t *testing.T, consumer, provider string) {
	t.Helper()
	if out, err := run(ctx, "network", "init", "--kubeconfig", kubeconfigs[consumer], "--remote-kubeconfig", kubeconfigs[provider]); err != nil {
		t.Fatalf("liqoctl network init %s -> %s: %v\n%s", consumer, provider, err, out)
	}
}

// seenFrom translates peer's addresses into c's view of them, as c's
// Configuration of peer maps them.
func seenFrom(ctx context.Context, c client.Client, peer string, addrs []string) ([]string, error) {
	m, ok, err := ipam.PeerMapping(ctx, c, peer)
	if err != nil || !ok {
		return nil, fmt.Errorf("no configured mapping of %s's networks (%v)", peer, err)
	}
	out := make([]string, 0, len(addrs))
	for _, a := range addrs {
		if v, ok := m.Translate(a); ok {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return out, nil
}

// TestServiceReflection follows the guide's "Offloading a Service" and its
// reverse: wherever the replicas run, the Service exists in both clusters
// and each cluster's EndpointSlices list every replica exactly once,
// milan's at its addresses for rome's pods (the clusters share their pod
// CIDR, so milan remaps rome's).
func TestServiceReflection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	peer(t, "rome", "milan")
	networkInit(ctx, t, "rome", "milan")
	rome, milan := clusterClient(t, "rome"), clusterClient(t, "milan")

	cases := []struct {
		ns, strategy string
		replicas     int32
		// wantLocal and wantRemote are how many replicas run on rome's own
		// nodes and on milan.
		wantLocal, wantRemote int
	}{
		{"liqo-demo", "Local", 2, 2, 0},
		{"flights-remote", "Remote", 2, 0, 2},
		// rome has two workers and one virtual node: one replica each.
		{"flights-split", "LocalAndRemote", 3, 2, 1},
	}
	for _, c := range cases {
		t.Run(c.strategy, func(t *testing.T) {
			twin := offloadWith(ctx, t, rome, c.ns, "--namespace-mapping-strategy", "EnforceSameName",
				"--pod-offloading-strategy", c.strategy, "--selector", "liqo.io/remote-cluster-id=milan")
			if twin != c.ns {
				t.Fatalf("twin namespace %q, want %q (EnforceSameName)", twin, c.ns)
			}
			d, s := flightsApp(c.ns, c.replicas)
			for _, o := range []client.Object{d, s} {
				if err := rome.Create(ctx, o); err != nil {
					t.Fatal(err)
				}
			}

			// The guide: `kubectl get services` on the provider shows it,
			// with its own cluster IP.
			var local, remote corev1.Service
			harness.Eventually(ctx, t, "the Service on milan", func() (bool, error) {
				err := milan.Get(ctx, client.ObjectKeyFromObject(s), &remote)
				return err == nil, client.IgnoreNotFound(err)
			})
			if out := kubectl(t, "milan", "", "get", "services", "-n", c.ns); !strings.Contains(out, "flights-service") {
				t.Errorf("kubectl get services on milan:\n%s", out)
			}
			if err := rome.Get(ctx, client.ObjectKeyFromObject(s), &local); err != nil {
				t.Fatal(err)
			}
			if remote.Spec.ClusterIP == "" || remote.Spec.ClusterIP == corev1.ClusterIPNone {
				t.Errorf("milan's copy has cluster IP %q, want one of its own", remote.Spec.ClusterIP)
			}
			t.Logf("cluster IPs: rome %s, milan %s", local.Spec.ClusterIP, remote.Spec.ClusterIP)

			var last string
			harness.Eventually(ctx, t, "every replica listed exactly once in each cluster", func() (bool, error) {
				physical, virtual, err := runningPods(ctx, rome, c.ns)
				if err != nil || len(physical) != c.wantLocal || len(virtual) != c.wantRemote {
					last = fmt.Sprintf("rome runs %v locally and %v on the virtual node", physical, virtual)
					return false, err
				}
				onMilan, _, err := runningPods(ctx, milan, c.ns)
				if err != nil {
					return false, err
				}
				romeNative, romeReflected, err := endpoints(ctx, rome, c.ns, "flights-service")
				if err != nil {
					return false, err
				}
				milanNative, milanReflected, err := endpoints(ctx, milan, c.ns, "flights-service")
				if err != nil {
					return false, err
				}
				all := slices.Sorted(slices.Values(append(slices.Clone(physical), virtual...)))
				// Each cluster sees the other's pods at its own addresses
				// for them.
				physicalOnMilan, err := seenFrom(ctx, milan, "rome", physical)
				if err != nil {
					return false, err
				}
				milansOnRome, err := seenFrom(ctx, rome, "milan", onMilan)
				if err != nil {
					return false, err
				}
				last = fmt.Sprintf("pods: rome %v, virtual %v, milan %v; rome slices %v (+%v reflected), milan slices %v (+%v reflected)",
					physical, virtual, onMilan, romeNative, romeReflected, milanNative, milanReflected)
				// rome's own controller sees every pod, offloaded ones with
				// their remote IPs; milan's sees its pods, and the
				// reflection adds rome's, at milan's addresses for them.
				return slices.Equal(romeNative, all) && len(romeReflected) == 0 &&
					slices.Equal(milanNative, onMilan) && len(milansOnRome) == len(onMilan) && slices.Equal(milansOnRome, virtual) &&
					len(physicalOnMilan) == len(physical) && slices.Equal(milanReflected, physicalOnMilan), nil
			})
			t.Log(last)
		})
	}
}
