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
