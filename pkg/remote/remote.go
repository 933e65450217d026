// Package remote is how a consumer reaches its providers: the one place
// that turns a peering's credentials (the control-plane Identity and the
// kubeconfig Secret its controller writes) into a REST config and clients,
// cached per provider until the credentials change. The controllers, the
// virtual kubelets, the reflection and the kubelet API all reach a
// provider through it.
package remote

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/clientcfg"
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

// For returns the credentials of the control-plane Identity for provider,
// from its kubeconfig Secret.
func For(ctx context.Context, c client.Reader, provider string) (*Remote, error) {
	ns := consts.TenantNamespace(provider)
	var id authv1beta1.Identity
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: consts.IdentityName(provider)}, &id); err != nil {
		return nil, fmt.Errorf("no identity for provider %s: %w", provider, err)
	}
	if id.Status.KubeconfigSecretRef == nil || id.Spec.Namespace == nil {
		return nil, fmt.Errorf("the identity for provider %s is not ready yet", provider)
	}
	cfg, version, err := FromSecret(ctx, c, types.NamespacedName{Namespace: ns, Name: id.Status.KubeconfigSecretRef.Name})
	if err != nil {
		return nil, fmt.Errorf("provider %s: %w", provider, err)
	}
	return &Remote{Config: cfg, Namespace: *id.Spec.Namespace, Version: version}, nil
}

// FromSecret reads the kubeconfig Secret key and returns its REST config
// and the Secret's version.
func FromSecret(ctx context.Context, c client.Reader, key types.NamespacedName) (*rest.Config, string, error) {
	var s corev1.Secret
	if err := c.Get(ctx, key, &s); err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig Secret %s: %w", key, err)
	}
	cfg, err := RESTConfig(s.Data[consts.KubeconfigKey])
	if err != nil {
		return nil, "", err
	}
	return cfg, s.ResourceVersion, nil
}

// RESTConfig parses a provider's kubeconfig (auth.BuildKubeconfig).
func RESTConfig(kubeconfig []byte) (*rest.Config, error) {
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("parsing the identity kubeconfig: %w", err)
	}
	// The reflection writes every offloaded pod and reflected object
	// through these clients: the client-go default of 5 QPS (or any low
	// cap) makes a burst of remote writes queue for seconds; the provider's
	// API server has its own priority and fairness.
	cfg.QPS, cfg.Burst = clientcfg.QPS, clientcfg.Burst
	return cfg, nil
}
