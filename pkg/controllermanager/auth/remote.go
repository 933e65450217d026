package auth

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// Remote is how this cluster reaches one of its providers.
type Remote struct {
	Config *rest.Config
	// Namespace is the tenant namespace this cluster owns on the provider.
	Namespace string
	// Version changes whenever the credentials do, so cached clients can be
	// rebuilt.
	Version string
}

// RemoteFor returns the credentials of the control-plane Identity for
// provider, from its kubeconfig Secret.
func RemoteFor(ctx context.Context, c client.Reader, provider string) (*Remote, error) {
	ns := consts.TenantNamespace(provider)
	var id authv1beta1.Identity
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: consts.IdentityName(provider)}, &id); err != nil {
		return nil, fmt.Errorf("no identity for provider %s: %w", provider, err)
	}
	if id.Status.KubeconfigSecretRef == nil || id.Spec.Namespace == nil {
		return nil, fmt.Errorf("the identity for provider %s is not ready yet", provider)
	}
	var s corev1.Secret
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: id.Status.KubeconfigSecretRef.Name}, &s); err != nil {
		return nil, fmt.Errorf("reading the kubeconfig of provider %s: %w", provider, err)
	}
	cfg, err := RESTConfig(s.Data[consts.KubeconfigKey])
	if err != nil {
		return nil, err
	}
	return &Remote{Config: cfg, Namespace: *id.Spec.Namespace, Version: s.ResourceVersion}, nil
}
