package network

import (
	"context"
	"fmt"
	"time"

	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/peering/netsetup"
)

// pair reaches both clusters and learns their IDs.
func (o *Options) pair(ctx context.Context) (local, remote *netsetup.Side, err error) {
	reach := min(o.Timeout, 10*time.Second)
	for _, c := range []*factory.Cluster{&o.Local, &o.Remote} {
		if err := c.Connect(ctx, reach); err != nil {
			return nil, nil, err
		}
	}
	li, err := o.Local.FindComponents(ctx)
	if err != nil {
		return nil, nil, err
	}
	ri, err := o.Remote.FindComponents(ctx)
	if err != nil {
		return nil, nil, err
	}
	if li.ID == ri.ID {
		return nil, nil, fmt.Errorf("the local and remote clusters are both %q: a cluster cannot connect to itself", li.ID)
	}
	o.Out.Info("Local cluster %q and remote cluster %q found", li.ID, ri.ID)
	local, remote = netsetup.Pair(sideOf(&o.Local, li.ID), sideOf(&o.Remote, ri.ID))
	return local, remote, nil
}

// sideOf is cluster c, whose ID is id, as the fabric's setup sees it.
func sideOf(c *factory.Cluster, id string) netsetup.Side {
	return netsetup.Side{Client: c.Client, Role: c.Role, Namespace: c.Namespace, ID: id}
}

// settings are the fabric's choices the flags made.
func (o *Options) settings() netsetup.Settings {
	s := o.Settings
	s.ServiceTypeChosen, s.ServerLocal, s.Out = o.serverServiceTypeChosen(), o.ServerLocation == ServerLocal, o.Out
	return s
}

// OutOfBand is the network part of an out-of-band peering request: the
// connect flags, checked, for the consumer's controller manager, which
// sets the fabric up with the peering user's credentials on the provider.
func (o *Options) OutOfBand() (*peering.FabricOptions, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.ServerLocation == ServerLocal {
		return nil, fmt.Errorf("--gw-server-service-location %s needs a gateway client on the provider, which a peering user may not create: "+
			"peer out-of-band runs the gateway server on the provider", ServerLocal)
	}
	s := o.settings()
	return &s.FabricOptions, nil
}

// Connect sets up the fabric, printing each step.
func (o *Options) Connect(ctx context.Context) error {
	if err := o.validate(); err != nil {
		return err
	}
	local, remote, err := o.pair(ctx)
	if err != nil {
		return err
	}
	return netsetup.Connect(ctx, o.settings(), local, remote)
}

// Init declares each cluster's pod and external CIDRs to the other,
// without gateways (netsetup.Init).
func (o *Options) Init(ctx context.Context) error {
	local, remote, err := o.pair(ctx)
	if err != nil {
		return err
	}
	return netsetup.Init(ctx, o.settings(), local, remote)
}

// Disconnect removes the gateways and the exchanged keys on both clusters,
// and with reset the Configurations too.
func (o *Options) Disconnect(ctx context.Context, reset bool) error {
	local, remote, err := o.pair(ctx)
	if err != nil {
		return err
	}
	return netsetup.Disconnect(ctx, o.settings(), local, remote, reset)
}
