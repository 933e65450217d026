package clusterset

import (
	"context"
	"slices"

	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// Peers are a cluster's direct peers, by role: the clusterset.
type Peers struct {
	// Consumers hold a Tenant here; Providers an Identity of this
	// cluster's control plane there.
	Consumers, Providers []string
}

// ListPeers reads the cluster's peers from its Tenants and Identities.
func ListPeers(ctx context.Context, r client.Reader) (Peers, error) {
	var p Peers
	var tenants authv1beta1.TenantList
	if err := r.List(ctx, &tenants); err != nil {
		return p, err
	}
	for _, t := range tenants.Items {
		if id, ok := consts.ClusterIDOfTenantNamespace(t.Namespace); ok && t.DeletionTimestamp.IsZero() {
			p.Consumers = append(p.Consumers, id)
		}
	}
	var ids authv1beta1.IdentityList
	if err := r.List(ctx, &ids); err != nil {
		return p, err
	}
	for _, i := range ids.Items {
		if id, ok := consts.ClusterIDOfTenantNamespace(i.Namespace); ok && i.Name == consts.IdentityName(id) && i.DeletionTimestamp.IsZero() {
			p.Providers = append(p.Providers, id)
		}
	}
	slices.Sort(p.Consumers)
	slices.Sort(p.Providers)
	return p, nil
}

// Has tells whether id is a peer, and in which roles.
func (p Peers) Has(id string) (consumer, provider bool) {
	return slices.Contains(p.Consumers, id), slices.Contains(p.Providers, id)
}
