package controllermanager

import (
	"maps"

	appsv1 "k8s.io/api/apps/v1"
	certv1 "k8s.io/api/certificates/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowendpointslice"
	"github.com/liqo-go/liqo/pkg/controllermanager/shadowpod"
	"github.com/liqo-go/liqo/pkg/webhook/quota"
	"github.com/liqo-go/liqo/pkg/webhook/reflected"
)

// cacheByObject are the manager's cache options by kind: a cluster's
// Pods, Secrets, Services and EndpointSlices are many and large, and the
// consumers write some of them in bulk; the controllers read only their
// own, and the webhooks only part of each Ingress and ShadowPod. What a
// consumer writes is bounded by its ObjectBudget, but a cache holding it
// all would still grow with the tenants.
func cacheByObject() map[client.Object]cache.ByObject {
	managed := labels.SelectorFromSet(labels.Set{consts.ManagedByLabel: consts.ManagedByValue})
	// Only the Pods made for ShadowPods: a provider's own Pods can be many,
	// and the controllers never read them. ShadowPods whose Pod exists are
	// kept with only the resources of their spec and their origin label,
	// which the quota ledger reads (see shadowpod.ShadowPodCache).
	byObject := shadowpod.Caches(quota.QuotaFields)
	maps.Copy(byObject, map[client.Object]cache.ByObject{
		// Only our own Secrets are cached, and without their contents: a
		// cluster's Secrets can be many and large, and hold its tenants'
		// credentials. The client reads Secrets from the API server.
		&corev1.Secret{}: secretCache(),
		// Only our own Services (the gateways'): the consumers' reflected
		// ones are theirs, and nothing here reads them.
		&corev1.Service{}:     {Label: ownObjects()},
		&rbacv1.RoleBinding{}: {Label: managed},
		// Only the gateways' Deployments.
		&appsv1.Deployment{}:                {Label: managed},
		&certv1.CertificateSigningRequest{}: {Label: managed},
		// Only the EndpointSlices made for ShadowEndpointSlices, for the
		// same reason as the Pods.
		&discoveryv1.EndpointSlice{}: shadowendpointslice.EndpointSliceCache(),
		// Every Ingress, for the hosts they claim, and nothing else of them.
		&networkingv1.Ingress{}: reflected.IngressCache(),
	})
	return byObject
}

// ownObjects selects this cluster's own objects: labelled as managed by
// liqo, and without the origin label every object a consumer writes here
// carries (reflected objects carry managed-by too).
func ownObjects() labels.Selector {
	managed, err := labels.NewRequirement(consts.ManagedByLabel, selection.Equals, []string{consts.ManagedByValue})
	if err != nil {
		panic(err) // constant arguments
	}
	reflected, err := labels.NewRequirement(consts.OriginClusterIDLabel, selection.DoesNotExist, nil)
	if err != nil {
		panic(err)
	}
	return labels.NewSelector().Add(*managed, *reflected)
}

// secretCache is what the manager's cache keeps of Secrets: the metadata of
// its own (nonces, kubeconfigs, gateway keys), never their bytes. The
// controllers watch those Secrets only to be woken up; the few that need
// the contents read them from the API server (clientOptions), when they
// run. Left out entirely are the Secrets consumers reflect into twin
// namespaces (they carry managed-by too, and the origin label): a provider
// would otherwise hold every consumer's application Secrets and tokens in
// memory, the amount growing with its tenants' workloads.
func secretCache() cache.ByObject {
	return cache.ByObject{Label: ownObjects(), Transform: secretMetadataOnly}
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
