package gateway

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/liqo-go/liqo/pkg/kit"
)

// Options are the manager's settings for the gateways it runs.
type Options struct {
	// Image is the gateway image (cmd/liqo-gateway).
	Image string
	// PullPolicy of the gateway pods.
	PullPolicy corev1.PullPolicy
	// NodeSelector, when set, restricts the nodes the gateway pods run on
	// (those with a public address, say), besides never a virtual node.
	NodeSelector map[string]string
	// Replicas of each gateway, when more than one: one active, the
	// others standing by (liqoctl install --enable-ha gives 2). Zero or
	// one leaves the count to the Deployment (one), so that an
	// administrator may scale a gateway.
	Replicas int32
	// Owner owns the gateways' node binding (one for all peerings).
	Owner kit.InstallOwner
}

// Validate tells what is wrong with o, if anything.
func (o Options) Validate() error {
	return kit.ValidateImage("gateway", o.Image, o.PullPolicy)
}
