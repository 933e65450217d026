package dashboard

import (
	"time"

	corev1 "k8s.io/api/core/v1"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/liqoctl/info"
)

// State is the dashboard's whole picture, as GET /api/state serves it and
// the page draws it. Every list is sorted, so that two states built from
// the same objects marshal to the same bytes.
type State struct {
	// Version grows by one each time the picture changes.
	Version uint64 `json:"version"`
	// Updated is when the picture last changed.
	Updated time.Time `json:"updated"`
	// Clusters are the topology's nodes: the kubeconfig's contexts, and the
	// peers they name that no context reaches (Watched false).
	Clusters []Cluster `json:"clusters"`
	// Peerings are the topology's edges, consumer → provider.
	Peerings     []Peering     `json:"peerings"`
	Namespaces   []Namespace   `json:"namespaces"`
	TroubledPods []TroubledPod `json:"troubledPods"`
	// Events are the most recent peering Events, newest first.
	Events []Event `json:"events"`
}

// Cluster is one node of the topology.
type Cluster struct {
	// ID is the cluster ID, or the context's name when the cluster could
	// not be read (Error says why).
	ID      string `json:"id"`
	Context string `json:"context,omitempty"`
	// Watched tells that a context reaches the cluster; false for a peer
	// known only from another cluster's ForeignCluster.
	Watched   bool              `json:"watched"`
	APIServer string            `json:"apiServer,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
	// Error is why the cluster is not shown from its own objects.
	Error string `json:"error,omitempty"`
	// WatchError is the last error of a watch of the cluster, cleared by
	// the next object the watches deliver.
	WatchError string `json:"watchError,omitempty"`
}

// Health words of a peering and of its modules, the worst first.
const (
	HealthUnhealthy = "Unhealthy"
	HealthPending   = "Pending"
	HealthHealthy   = "Healthy"
	HealthDisabled  = "Disabled"
)

// Peering is one edge: the consumer uses the provider's resources.
type Peering struct {
	// ID is "consumer->provider".
	ID       string `json:"id"`
	Consumer string `json:"consumer"`
	Provider string `json:"provider"`
	// Health is the worst of the enabled modules' states.
	Health         string `json:"health"`
	Authentication Module `json:"authentication"`
	Offloading     Module `json:"offloading"`
	Networking     Module `json:"networking"`
	// Latency is the tunnel's last measured round trip.
	Latency string `json:"latency,omitempty"`
	// CIDRs are each side's CIDRs as the other side sees them remapped.
	CIDRs []RemappedCIDR `json:"cidrs,omitempty"`
	// Slices are the consumer's ResourceSlices: asked and granted.
	Slices []info.ResourceSliceInfo `json:"slices,omitempty"`
	// Used is what the consumer's pods on the provider's virtual nodes
	// request, extended resources (GPUs) included.
	Used         map[string]string      `json:"used,omitempty"`
	VirtualNodes []info.VirtualNodeInfo `json:"virtualNodes,omitempty"`
	// SeenBy are the clusters whose ForeignCluster reports the peering.
	SeenBy []string `json:"seenBy"`
}

// Module is a peering module's state, from both sides' ForeignClusters.
type Module struct {
	Status string `json:"status"`
	// Problems are the conditions that are not fine, as "cluster: type:
	// reason: message".
	Problems []string `json:"problems,omitempty"`
}

// RemappedCIDR is a CIDR of cluster Of as cluster On reaches it.
type RemappedCIDR struct {
	Of       string `json:"of"`
	On       string `json:"on"`
	Kind     string `json:"kind"`
	CIDR     string `json:"cidr"`
	Remapped string `json:"remapped,omitempty"`
}

// Namespace is one offloaded namespace and its twins.
type Namespace struct {
	// Cluster is the namespace's home, where its NamespaceOffloading is.
	Cluster         string `json:"cluster"`
	Name            string `json:"name"`
	Phase           string `json:"phase"`
	PodStrategy     string `json:"podOffloadingStrategy,omitempty"`
	MappingStrategy string `json:"namespaceMappingStrategy,omitempty"`
	Twins           []Twin `json:"twins"`
	// LocalPods run on the home cluster's own nodes, RemotePods on each
	// provider (by cluster ID), PendingPods on no node yet.
	LocalPods   int            `json:"localPods"`
	RemotePods  map[string]int `json:"remotePods,omitempty"`
	PendingPods int            `json:"pendingPods"`
}

// Twin is an offloaded namespace's twin on one provider.
type Twin struct {
	Cluster string `json:"cluster"`
	Name    string `json:"name,omitempty"`
	// State is Ready, NotReady, NotSelected or Pending.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
}

// Twin states.
const (
	TwinReady       = "Ready"
	TwinNotReady    = "NotReady"
	TwinNotSelected = "NotSelected"
	TwinPending     = "Pending"
)

// TroubledPod is a pod of an offloaded namespace, or on a virtual node,
// that is not doing what it should, with the reason as it was given.
type TroubledPod struct {
	Cluster   string `json:"cluster"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Node      string `json:"node,omitempty"`
	// Provider is the cluster the pod's virtual node stands for.
	Provider string `json:"provider,omitempty"`
	// Trouble is one word: OffloadingBackOff, RemotePending,
	// Unschedulable, Failed or a container's waiting reason.
	Trouble string `json:"trouble"`
	Message string `json:"message,omitempty"`
}

// Event is one peering Event.
type Event struct {
	Cluster string    `json:"cluster"`
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Kind    string    `json:"kind"`
	Object  string    `json:"object"`
	Message string    `json:"message"`
	Count   int32     `json:"count,omitempty"`
}

// Snapshot is what one context's cluster holds, read from the watches'
// caches: the input of Build.
type Snapshot struct {
	Context   string
	ID        string
	Labels    map[string]string
	APIServer string
	// Error is why the cluster's objects cannot be read (nothing else is).
	Error      string
	WatchError string
	// Objects are what `liqoctl info` reads.
	Objects              info.Objects
	Configurations       []netv1beta1.Configuration
	NamespaceOffloadings []offv1beta1.NamespaceOffloading
	NamespaceMaps        []offv1beta1.NamespaceMap
	Pods                 []corev1.Pod
	Events               []corev1.Event
}
