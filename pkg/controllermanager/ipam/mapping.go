package ipam

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/ipam"
	"github.com/liqo-go/liqo/pkg/kit"
)

// PeerMapping is how this cluster translates the addresses of peer's pods
// and external CIDR into its own view, from the Configuration of that
// peer. ok is false when there is none, or it is not configured yet: no
// network fabric with that peer, and nothing to translate.
func PeerMapping(ctx context.Context, r client.Reader, peer string) (m ipam.Mapping, ok bool, err error) {
	var cfg netv1beta1.Configuration
	err = r.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace(peer), Name: peer}, &cfg)
	if err != nil || cfg.Status.Remote == nil || !kit.IsTrue(cfg.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition) {
		return ipam.Mapping{}, false, client.IgnoreNotFound(err)
	}
	strs := func(cs ...[]netv1beta1.CIDR) []string {
		var out []string
		for _, c := range slices.Concat(cs...) {
			out = append(out, string(c))
		}
		return out
	}
	m, err = ipam.NewMapping(strs(cfg.Spec.Remote.CIDR.Pod, cfg.Spec.Remote.CIDR.External),
		strs(cfg.Status.Remote.CIDR.Pod, cfg.Status.Remote.CIDR.External))
	return m, err == nil, err
}

// PeerTranslate is PeerMapping's Translate for peer, or nil when the fabric
// with that peer is not configured (nothing to translate): what the
// provider's forging of a consumer's Pods and EndpointSlices takes.
func PeerTranslate(ctx context.Context, r client.Reader, peer string) (func(string) (string, bool), error) {
	m, ok, err := PeerMapping(ctx, r, peer)
	if err != nil || !ok {
		return nil, err
	}
	return m.Translate, nil
}
