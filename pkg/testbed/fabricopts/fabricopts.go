// Package fabricopts turns the network fabric on for a controller manager
// running against a testbed cluster with real nodes: the gateway and node
// agent images, built from these sources, published in the cluster's
// registry, and the manager's options pointing at them. The playground,
// the end-to-end tests and the benchmarks share it. It lives apart from
// package testbed, which the manager's own tests import.
package fabricopts

import (
	"context"
	"fmt"
	"net/netip"

	corev1 "k8s.io/api/core/v1"

	"github.com/liqo-go/liqo/pkg/controllermanager"
	"github.com/liqo-go/liqo/pkg/images/catalog"
	"github.com/liqo-go/liqo/pkg/testbed"
)

// Enable publishes the images in c's registry and sets o's fabric options:
// the cluster's pod CIDR, the images (pulled every time: the tag is reused
// by every build), and gateways and offloaded pods on the real nodes (the
// simulated ones carry no packets).
func Enable(ctx context.Context, c *testbed.Cluster, o *controllermanager.Options) error {
	if err := c.PushComponents(ctx, catalog.Gateway, catalog.Fabric); err != nil {
		return err
	}
	pod, err := netip.ParsePrefix(c.Spec.PodCIDR)
	if err != nil {
		return fmt.Errorf("cluster %s: pod CIDR %q: %w", c.Name, c.Spec.PodCIDR, err)
	}
	o.IPAM.PodCIDR = pod
	for _, x := range []struct {
		image  *string
		policy *corev1.PullPolicy
		name   string
	}{{&o.Gateway.Image, &o.Gateway.PullPolicy, catalog.Gateway}, {&o.Fabric.Image, &o.Fabric.PullPolicy, catalog.Fabric}} {
		comp, err := catalog.Lookup(x.name)
		if err != nil {
			return err
		}
		*x.image, *x.policy = comp.Ref(testbed.TestImageTag), corev1.PullAlways
	}
	real := map[string]string{testbed.NodeTypeLabel: testbed.RealNodeType}
	o.Gateway.NodeSelector, o.OffloadedPodNodeSelector = real, real
	return nil
}
