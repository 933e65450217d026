package ipam

import (
	"context"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/ipam"
)

// PeerMapping is how this cluster translates the addresses of peer's pods
// and external CIDR into its own view, from the Configuration of that
// peer. ok is false when there is none, or it is not configured yet: no
// network fabric with that peer, and nothing to translate.
func PeerMapping(ctx context.Context, r client.Reader, peer string) (m ipam.Mapping, ok bool, err error) {
	var cfg netv1beta1.Configuration
	if err := r.Get(ctx, types.NamespacedName{Namespace: consts.TenantNamespace(peer), Name: peer}, &cfg); err != nil {
		return ipam.Mapping{}, false, client.IgnoreNotFound(err)
	}
	return ipam.RemoteMapping(&cfg)
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
