package controllermanager

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
)

// secretCache is what the manager's cache keeps of Secrets: the metadata of
// its own (nonces, kubeconfigs, gateway keys), never their bytes. The
// controllers watch those Secrets only to be woken up; the few that need
// the contents read them from the API server (clientOptions), when they
// run. Left out entirely are the Secrets consumers reflect into twin
// namespaces (they carry managed-by too, and the origin label): a provider
// would otherwise hold every consumer's application Secrets and tokens in
// memory, the amount growing with its tenants' workloads.
func secretCache() cache.ByObject {
	managed, err := labels.NewRequirement(consts.ManagedByLabel, selection.Equals, []string{consts.ManagedByValue})
	if err != nil {
		panic(err) // constant arguments
	}
	reflected, err := labels.NewRequirement(consts.OriginClusterIDLabel, selection.DoesNotExist, nil)
	if err != nil {
		panic(err)
	}
	return cache.ByObject{Label: labels.NewSelector().Add(*managed, *reflected), Transform: secretMetadataOnly}
}

// secretMetadataOnly drops from a Secret about to be cached what holds its
// contents: the data, and the last-applied annotation kubectl apply leaves
// with a copy of them. Managed fields go too: nothing reads them.
func secretMetadataOnly(obj any) (any, error) {
	s, ok := obj.(*corev1.Secret)
	if !ok {
		return obj, nil
	}
	s.Data, s.StringData, s.ManagedFields = nil, nil, nil
	delete(s.Annotations, corev1.LastAppliedConfigAnnotation)
	return s, nil
}

// clientOptions make the manager's client read Secrets from the API server,
// as its cache holds no Secret contents.
func clientOptions() client.Options {
	return client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&corev1.Secret{}}}}
}
