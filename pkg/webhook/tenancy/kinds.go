package tenancy

import (
	eventsv1 "k8s.io/api/events/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

// The resources the reflected objects' webhook judges: those a consumer's
// reflection writes in its twin namespaces that components of the provider
// act upon, by their content or by their labels and annotations (which controllers,
// meshes and issuers select objects by): all of them but pods, which come
// as ShadowPods, judged by their own webhook. EndpointSlices come as
// ShadowEndpointSlices, whose labels and annotations the provider's slice
// carries.
var (
	ServicesResource             = schema.GroupResource{Resource: "services"}
	SecretsResource              = schema.GroupResource{Resource: "secrets"}
	ConfigMapsResource           = schema.GroupResource{Resource: "configmaps"}
	IngressesResource            = schema.GroupResource{Group: networkingv1.GroupName, Resource: "ingresses"}
	PVCsResource                 = schema.GroupResource{Resource: "persistentvolumeclaims"}
	ShadowEndpointSlicesResource = schema.GroupResource{Group: offv1beta1.GroupVersion.Group, Resource: "shadowendpointslices"}
)

// The kinds a consumer writes into its tenant namespace on a provider,
// which the replicas' webhook judges: its replicas, and the records of its
// Multi-Cluster Services exports.
var (
	NamespaceMapsResource  = schema.GroupResource{Group: offv1beta1.GroupVersion.Group, Resource: "namespacemaps"}
	ResourceSlicesResource = schema.GroupResource{Group: authv1beta1.GroupVersion.Group, Resource: "resourceslices"}
	ExportRecordsResource  = schema.GroupResource{Group: offv1beta1.GroupVersion.Group, Resource: "exportrecords"}
)

// The Events resources a consumer writes, in both API groups.
var (
	EventsResource   = schema.GroupResource{Resource: "events"}
	EventsV1Resource = schema.GroupResource{Group: eventsv1.GroupName, Resource: "events"}
)

// ShadowPodsResource is the resource the ShadowPod webhook judges.
var ShadowPodsResource = schema.GroupResource{Group: offv1beta1.GroupVersion.Group, Resource: "shadowpods"}
