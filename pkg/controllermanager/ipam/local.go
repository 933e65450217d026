package ipam

import (
	"context"
	"fmt"
	"net/netip"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	ipamv1alpha1 "github.com/liqo-go/liqo/apis/ipam/v1alpha1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// ExternalPreAllocated is how many addresses of the external CIDR are kept
// out of IPs: the first one stands for traffic of unknown origin.
const ExternalPreAllocated = 1

// LocalNetworks keeps one Network per network of this cluster (pod-cidr,
// service-cidr, external-cidr, reserved-subnet-N), labelled
// ipam.liqo.io/network-not-remapped, in the components' namespace: IPs take
// their addresses from external-cidr, and liqoctl reads a cluster's CIDRs
// there when it connects two clusters.
type LocalNetworks struct {
	Client  client.Client
	Options Options
}

// Start creates the Networks once the manager runs, and returns (it has
// nothing to watch: they change only with the flags).
func (l *LocalNetworks) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("ipam")
	for name, p := range l.Options.local() {
		if err := l.ensure(ctx, name, p); err != nil {
			// Not fatal: the rest of the manager works without it, and
			// the Configurations say what is missing.
			log.Error(err, "keeping the Network of a local CIDR", "network", name)
		}
	}
	return nil
}

// NeedLeaderElection: only the active replica writes.
func (l *LocalNetworks) NeedLeaderElection() bool { return true }

func (l *LocalNetworks) ensure(ctx context.Context, name string, p netip.Prefix) error {
	pre := int32(0)
	if name == ipamv1alpha1.ExternalNetworkName {
		pre = ExternalPreAllocated
	}
	want := &ipamv1alpha1.Network{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: l.Options.Namespace, Labels: map[string]string{
			ipamv1alpha1.NetworkNotRemappedLabel: "true",
			consts.ManagedByLabel:                consts.ManagedByValue,
		}},
		Spec: ipamv1alpha1.NetworkSpec{CIDR: netv1beta1.CIDR(p.String()), PreAllocated: pre},
	}
	l.Options.Owner.Own(want)
	var have ipamv1alpha1.Network
	err := l.Client.Get(ctx, client.ObjectKeyFromObject(want), &have)
	switch {
	case apierrors.IsNotFound(err):
		return l.Client.Create(ctx, want)
	case err != nil:
		return err
	case have.Spec.CIDR == want.Spec.CIDR && have.Spec.PreAllocated == pre:
		return nil
	}
	// The flags changed; the spec is immutable, so the object is replaced.
	// IPs allocated in an old external CIDR then report a conflict.
	if err := l.Client.Delete(ctx, &have, client.Preconditions{UID: &have.UID}); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("replacing Network %s (%s, now %s): %w", name, have.Spec.CIDR, p, err)
	}
	return l.Client.Create(ctx, want)
}
