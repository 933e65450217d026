package reflection

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/remotecluster"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
	"github.com/liqo-go/liqo/test/harness"
)

// TestTwoNodesOneProvider runs two virtual nodes of one provider sharing
// the provider's part of the reflection, as the VirtualNode reconciler
// does: the twin namespace's objects have one writer whichever node came
// first. Each subtest is a problem two nodes with a reflection each had.
func TestTwoNodesOneProvider(t *testing.T) {
	const id, ns = "twins", "twonodes"
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	twin := ns + "-" + consumerID
	for _, name := range []string{ns, consts.TenantNamespace(id)} {
		if err := consumer.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatal(err)
		}
	}
	if err := provider.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: twin}}); err != nil {
		t.Fatal(err)
	}
	rc, err := remotecluster.New(id, "", providerConfig, remotecluster.Options{Scheme: apis.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	var providers Providers
	first, second := "virtual-"+id+"-first", "virtual-"+id+"-second"
	start := func(node string) {
		rctx, stop := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() {
			done <- Run(rctx, Config{NodeName: node, LocalClusterID: consumerID, ProviderID: id,
				Local: consumerCS, LocalCluster: localCluster, Maps: mapCache, Remote: rc, Scheme: apis.NewScheme(),
				Recorder: &record.FakeRecorder{}, Providers: &providers,
				// A refresh about every second: a keeper that took the
				// Secret for unused would delete it at once.
				tokenOptions: tokenOptions{RefreshFraction: 1.0 / 3600}})
		}()
		t.Cleanup(func() {
			stop()
			if err := <-done; err != nil {
				t.Errorf("the reflection of %s ended with %v", node, err)
			}
		})
	}
	start(second)
	setMappingOf(ctx, t, id, ns, twin)

	t.Run("a node's token keeper leaves the Secrets of the other node's pods", func(t *testing.T) {
		harness.Eventually(ctx, t, "the default ServiceAccount and root CA of "+ns, func() (bool, error) {
			_, err1 := consumerCS.CoreV1().ServiceAccounts(ns).Get(ctx, "default", metav1.GetOptions{})
			_, err2 := consumerCS.CoreV1().ConfigMaps(ns).Get(ctx, forge.RootCAConfigMap, metav1.GetOptions{})
			return err1 == nil && err2 == nil, client.IgnoreNotFound(errors.Join(err1, err2))
		})
		p := testPod(ns, "api")
		p.Spec.NodeName = second
		if err := consumer.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		waitRunning(ctx, t, ns, twin, "api")
		name := forge.TokenSecretName("default", "")
		secret, err := getSecret(ctx, twin, name)
		if err != nil {
			t.Fatal(err)
		}
		// The first node comes with no pod: its keeper, had it one of its
		// own, would adopt the Secret and delete it at its first refresh.
		start(first)
		harness.Eventually(ctx, t, "the first node's pods attached to the twin", func() (bool, error) {
			return slices.Equal(nodesOf(&providers, rc), []string{first, second}), nil
		})
		for range 5 {
			time.Sleep(time.Second)
			now, err := getSecret(ctx, twin, name)
			if err != nil {
				t.Fatalf("the token Secret of the second node's pod: %v", err)
			}
			if now.UID != secret.UID {
				t.Fatalf("the token Secret of the second node's pod was deleted and made again")
			}
		}
	})

	t.Run("the reflected EndpointSlice leaves out the replicas on either node", func(t *testing.T) {
		endpoint := func(ip, node string) discoveryv1.Endpoint {
			return discoveryv1.Endpoint{Addresses: []string{ip}, NodeName: ptr.To(node),
				Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}}
		}
		// Written by hand: the EndpointSlice controller leaves alone a
		// slice another manager made.
		slice := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: ns,
			Labels: map[string]string{discoveryv1.LabelServiceName: "web", discoveryv1.LabelManagedBy: "test"}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Endpoints:   []discoveryv1.Endpoint{endpoint("10.244.0.5", "worker"), endpoint("10.244.0.6", first), endpoint("10.244.0.7", second)}}
		if err := consumer.Create(ctx, slice); err != nil {
			t.Fatal(err)
		}
		key := types.NamespacedName{Namespace: twin, Name: slice.Name}
		onlyLocal := func(s *offv1beta1.ShadowEndpointSlice) bool {
			e := s.Spec.Template.Endpoints
			return len(e) == 1 && slices.Equal(e[0].Addresses, []string{"10.244.0.5"})
		}
		waitFor(ctx, t, "the ShadowEndpointSlice with the local replica only", key, onlyLocal)
		// Two nodes forging it each their own way would rewrite it over
		// and over: it must stay as it is.
		var s offv1beta1.ShadowEndpointSlice
		for range 3 {
			time.Sleep(time.Second)
			if err := provider.Get(ctx, key, &s); err != nil {
				t.Fatal(err)
			}
			if !onlyLocal(&s) {
				t.Fatalf("the ShadowEndpointSlice lists %+v, want the local replica only", s.Spec.Template.Endpoints)
			}
		}
	})
}

// nodesOf are the names of the nodes sharing the part of provider rc.
func nodesOf(ps *Providers, rc *remotecluster.Cluster) []string {
	ps.mu.Lock()
	p := ps.running[rc]
	ps.mu.Unlock()
	if p == nil {
		return nil
	}
	return p.nodeNames()
}
