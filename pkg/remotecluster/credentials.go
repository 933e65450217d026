package remotecluster

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

// identityOf reads the control-plane Identity for provider: the key of its
// kubeconfig Secret and the tenant namespace this cluster owns there.
func identityOf(ctx context.Context, c client.Reader, provider string) (types.NamespacedName, string, error) {
	ns := consts.TenantNamespace(provider)
	var id authv1beta1.Identity
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: consts.IdentityName(provider)}, &id); err != nil {
		return types.NamespacedName{}, "", fmt.Errorf("no identity for provider %s: %w", provider, err)
	}
	if id.Status.KubeconfigSecretRef == nil || id.Spec.Namespace == nil {
		return types.NamespacedName{}, "", fmt.Errorf("the identity for provider %s is not ready yet", provider)
	}
	return types.NamespacedName{Namespace: ns, Name: id.Status.KubeconfigSecretRef.Name}, *id.Spec.Namespace, nil
}

// fromSecret reads the kubeconfig Secret key and returns its REST config
// and the Secret's version.
func fromSecret(ctx context.Context, c client.Reader, key types.NamespacedName) (*rest.Config, string, error) {
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

// RESTConfig parses a kubeconfig a peering wrote (auth.BuildKubeconfig).
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
