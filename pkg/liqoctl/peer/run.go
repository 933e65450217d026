package peer

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/peering"
)

// pairInfo carries what the steps learn about both clusters.
type pairInfo struct {
	local, remote *factory.ClusterInfo
	// inBandServer, when set, is the provider's API server URL in the
	// network fabric, given to the consumer instead of the provider's own.
	inBandServer string
}

// Run peers the clusters, printing each step: the network fabric unless
// disabled, the authentication (the steps liqoctl authenticate runs), then,
// unless told to stop earlier, a ResourceSlice and the wait for its
// virtual node.
func (o *Options) Run(ctx context.Context) error {
	var requested corev1.ResourceList
	if o.CreateResourceSlice {
		var err error
		if requested, err = o.requested(); err != nil {
			return err
		}
	}
	if o.InBand && o.NetworkingDisabled {
		return errors.New("--in-band needs the network fabric: it cannot go with --networking-disabled")
	}
	p, err := o.connect(ctx)
	if err != nil {
		return err
	}
	if err := checkName(o.Name, p.remote.ID); err != nil {
		return err
	}
	if o.Name != "" && !o.InBand && !o.NetworkingDisabled {
		inBand, err := reverseInBand(ctx, p, o.Remote.Client)
		if err != nil {
			return err
		}
		if inBand {
			o.out.Info("%s consumes this cluster in band: peering in band too (as liqoctl peer in-band)", p.remote.ID)
			o.InBand = true
		}
	}
	if !o.NetworkingDisabled {
		n := o.Network
		n.Local, n.Remote, n.Timeout, n.Out = o.Local, o.Remote, o.Timeout, o.out
		if o.InBand {
			n.Wait = true // the control plane goes through the tunnel
		}
		if err := n.Connect(ctx); err != nil {
			return fmt.Errorf("connecting the networks (--networking-disabled peers without): %w", err)
		}
	}
	if o.InBand {
		if p.inBandServer, err = o.inBandAPIServer(ctx, p); err != nil {
			return err
		}
	}
	if err := o.authenticate(ctx, p); err != nil {
		return err
	}
	if !o.CreateResourceSlice {
		o.out.Info("Authenticated with %s; no ResourceSlice asked for (liqoctl create resourceslice asks for one)", p.remote.ID)
		return nil
	}
	want := peering.ForgeResourceSlice(p.local.ID, p.remote.ID, p.remote.ID, requested, o.CreateVirtualNode)
	if o.ResourceSliceClass != "" {
		want.Spec.Class = authv1beta1.ResourceSliceClass(o.ResourceSliceClass)
	}
	s, err := peering.EnsureResourceSlice(ctx, o.Local.Client, o.out, want)
	if err != nil {
		return err
	}
	if !o.CreateVirtualNode {
		o.out.Info("Resources granted by %s; no virtual node made (--create-virtual-node=false)", p.remote.ID)
		return nil
	}
	return peering.WaitVirtualNode(ctx, o.Local.Client, o.out, s.Name, s.Status.Resources)
}

// authenticate runs the steps of the authentication with access to both
// clusters: the tenant namespaces, the provider's nonce signed by the
// consumer, the consumer's Tenant on the provider, the Identity it yields
// on the consumer.
func (o *Options) authenticate(ctx context.Context, p *pairInfo) error {
	local, remote := o.Local.Client, o.Remote.Client
	if err := peering.EnsureTenantNamespaces(ctx, o.out, peering.TenantOf{Client: local, Peer: p.remote.ID, Role: "local"}, peering.TenantOf{Client: remote, Peer: p.local.ID, Role: "remote"}); err != nil {
		return err
	}
	nonce, err := peering.EnsureNonce(ctx, remote, o.out, p.local.ID)
	if err != nil {
		return err
	}
	signed, err := peering.SignNonce(ctx, local, o.out, p.remote.ID, nonce)
	if err != nil {
		return err
	}
	t, err := peering.ApplyTenant(ctx, remote, o.out, peering.ForgeTenant(p.local.ID, signed, o.ProxyURL))
	if err != nil {
		return err
	}
	id := peering.ForgeIdentity(t, p.remote.ID)
	if p.inBandServer != "" {
		id.Spec.AuthParams.APIServer, id.Spec.AuthParams.TLSServerName = p.inBandServer, InBandTLSServerName
	}
	return peering.ApplyIdentity(ctx, local, o.out, id)
}

// connect checks both clusters are reachable, run Liqo in the given
// namespaces, and are two different clusters.
func (o *Options) connect(ctx context.Context) (*pairInfo, error) {
	return connectPair(ctx, &o.Local, &o.Remote, o.Timeout, o.out)
}

// connectPair reaches both clusters of a peering, checks that Liqo runs in
// each and that they are two clusters, and returns their identities.
func connectPair(ctx context.Context, local, remote *factory.Cluster, timeout time.Duration, out *output.Printer) (*pairInfo, error) {
	reach := min(timeout, 10*time.Second)
	for _, c := range []*factory.Cluster{local, remote} {
		if err := c.Connect(ctx, reach); err != nil {
			return nil, err
		}
	}
	l, err := local.FindComponents(ctx)
	if err != nil {
		return nil, err
	}
	r, err := remote.FindComponents(ctx)
	if err != nil {
		return nil, err
	}
	if l.ID == r.ID {
		return nil, fmt.Errorf("the local and remote clusters are both %q: a cluster cannot peer with itself (or two clusters share a cluster ID)", l.ID)
	}
	out.Info("Local cluster %q and remote cluster %q found", l.ID, r.ID)
	return &pairInfo{local: l, remote: r}, nil
}
