package v1beta1

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

var (
	// GroupVersion is the group and version of these types.
	GroupVersion = schema.GroupVersion{Group: "networking.liqo.io", Version: "v1beta1"}

	// SchemeBuilder registers the types with a runtime.Scheme.
	SchemeBuilder = &scheme.Builder{GroupVersion: GroupVersion}

	// AddToScheme adds the types of this group-version to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)
