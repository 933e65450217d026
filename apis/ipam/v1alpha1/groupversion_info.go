package v1alpha1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of these types.
	GroupVersion = schema.GroupVersion{Group: "ipam.liqo.io", Version: "v1alpha1"}

	// SchemeBuilder registers the types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// AllocatedCondition is the condition type a Network or an IP reports as
// True once the IPAM has allocated its status.cidr (or status.ip), and False
// with a reason when it cannot (no free network of that size, address
// outside the network).
const AllocatedCondition = "Allocated"

// Names of the Networks and IPs every cluster has in the components'
// namespace, which peers and liqoctl look up by name.
const (
	// ExternalNetworkName is the Network of the local external CIDR, where
	// IPs without a networkRef take their addresses.
	ExternalNetworkName = "external-cidr"
	// APIServerIPName is the IP that gives this cluster's API server (the
	// ClusterIP of Service default/kubernetes) its twin in the external
	// CIDR: pods offloaded to a peer reach their home API server there,
	// through the gateways, with the tokens the reflection gives them.
	APIServerIPName = "api-server"
)
