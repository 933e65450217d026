// Package consts holds the names, labels and annotations that the components
// and liqoctl agree on. They are part of the compatibility surface: the seed
// documents and users' manifests refer to several of them verbatim.
package consts

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
)

const (
	// DefaultNamespace is where liqoctl looks for the components when
	// --namespace is not given.
	DefaultNamespace = "liqo"

	// ClusterIDConfigMap holds the cluster's identity, written by the
	// controller manager at start; liqoctl reads it to find the components.
	ClusterIDConfigMap = "liqo-clusterid-configmap"
	// ClusterIDKey and ClusterLabelsKey are its data keys; the labels are
	// serialised as k=v,k=v.
	ClusterIDKey     = "CLUSTER_ID"
	ClusterLabelsKey = "CLUSTER_LABELS"

	// AppNameLabel, with the values below, marks objects as the reference
	// system labels them: its liqoctl, scripts and dashboards select the
	// cluster-ID ConfigMap and the controller manager's Deployment by it.
	AppNameLabel              = "app.kubernetes.io/name"
	ClusterIDConfigMapAppName = "clusterid-configmap"
	ControllerManagerAppName  = "controller-manager"

	// ControllerManagerLease is the leader-election Lease of the controller
	// manager; a recently renewed one tells liqoctl the components run.
	ControllerManagerLease = "liqo-controller-manager"
)

// Labels and taints of virtual nodes.
const (
	TypeLabel            = "liqo.io/type"
	TypeVirtualNode      = "virtual-node"
	RemoteClusterIDLabel = "liqo.io/remote-cluster-id"
	VirtualNodeTaintKey  = "virtual-node.liqo.io/not-allowed"
	VirtualNodeTaintVal  = "true"
	VirtualNodeRoleLabel = "node-role.kubernetes.io/virtual-node"
)

// Labels and annotations of offloaded namespaces.
const (
	// SchedulingEnabledLabel (value "true") marks a namespace offloaded by a
	// NamespaceOffloading: the pod webhook mutates the pods created in it.
	// Users may set it by hand ahead of the NamespaceOffloading, as the
	// documentation suggests, to close the race with early pods.
	SchedulingEnabledLabel = "liqo.io/scheduling-enabled"
	// ClusterSelectorErrorAnnotation on a NamespaceOffloading carries the
	// syntax error of its cluster selector, if any.
	ClusterSelectorErrorAnnotation = "liqo.io/cluster-selector-error"
)

// Labels on the objects of a peering.
const (
	// TenantNamespaceLabel marks a namespace as the tenant namespace of the
	// remote cluster named by RemoteClusterIDLabel.
	TenantNamespaceLabel = "liqo.io/tenant-namespace"
	// TwinNamespaceLabel marks the namespaces a provider created for a
	// consumer's offloaded namespaces, with RemoteClusterIDLabel naming the
	// consumer.
	TwinNamespaceLabel = "liqo.io/twin-namespace"
	// ManagedByLabel marks objects created by our components, so that they
	// only ever touch their own.
	ManagedByLabel = "app.kubernetes.io/managed-by"
	ManagedByValue = "liqo"
	// PartOfLabel marks every cluster-wide object of an install (the chart
	// sets it), which liqoctl uninstall looks for.
	PartOfLabel = "app.kubernetes.io/part-of"
	PartOfValue = "liqo"
	// ReplicationLabel marks a copy of a consumer's object on the provider.
	ReplicationLabel = "liqo.io/replication"
	// OriginClusterIDLabel names the cluster a replicated object came from.
	OriginClusterIDLabel = "liqo.io/origin-cluster-id"
	// NonceSecretLabel marks the provider's nonce Secret (value NonceIssued)
	// and the consumer's signed-nonce Secret (value NonceToSign).
	NonceSecretLabel = "liqo.io/nonce"
	NonceIssued      = "issued"
	NonceToSign      = "to-sign"
	// PlacementGate is the scheduling gate that holds a pod which may go
	// to a virtual node and requests resources until the placement
	// controller has narrowed its node affinity to the virtual nodes
	// whose provider has a node it fits on; PlacementLabel (value
	// "pending") marks such pods, for that controller's cache, and
	// PlacementAnnotation says why a pod is still held.
	PlacementGate       = "liqo.io/placement"
	PlacementLabel      = "liqo.io/placement"
	PlacementAnnotation = "liqo.io/placement"
	// DaemonSetOnVirtualNodesAnnotation on a DaemonSet, set to "true",
	// lets its pods go to virtual nodes: without it, its pods are kept off
	// them (a DaemonSet runs node agents, which a virtual node cannot
	// run, and its wide tolerations would take it there).
	DaemonSetOnVirtualNodesAnnotation = "liqo.io/daemonset-on-virtual-nodes"
	// CreateVirtualNodeAnnotation on a consumer's ResourceSlice, set to
	// "false", keeps the consumer from creating the slice's VirtualNode
	// once it is accepted (liqoctl create resourceslice --no-virtual-node,
	// peer --create-virtual-node=false); absent or "true", it is created.
	CreateVirtualNodeAnnotation = "liqo.io/create-virtual-node"
	// ConsumerPublicKeyAnnotation on a provider's tenant namespace pins the
	// identity key (base64) its consumer was first authenticated with: a
	// Tenant with another key is refused until the provider's administrator
	// removes it.
	ConsumerPublicKeyAnnotation = "liqo.io/consumer-public-key"
	// DecidedAnnotation records the request a slice's decision was made
	// for: a decision stands until the consumer changes its request, so
	// grants do not shift under running workloads when nodes come and go.
	// The consumer's replicator copies it back with the status, and liqoctl
	// waits for it to match its request.
	DecidedAnnotation = "liqo.io/decided-for"
)

// Names of the objects of a peering, inside the tenant namespaces.
const (
	// NonceSecret (on the provider) carries the nonce the consumer signs.
	NonceSecret = "liqo-nonce"
	// SignedNonceSecret (on the consumer) carries the nonce to sign; the
	// consumer's controller adds the signature, its public key and a CSR.
	SignedNonceSecret = "liqo-signed-nonce"

	NonceKey     = "nonce"
	SignatureKey = "signature"
	// PublicKeyKey holds a public key: the consumer's in the signed nonce
	// Secret, the WireGuard key in a gateway's key Secret.
	PublicKeyKey   = "publicKey"
	CSRKey         = "csr"
	KubeconfigKey  = "kubeconfig"
	SignedNonceErr = "error"
)

// NonceSize is the length in bytes of the provider's challenge. Only
// nonces of exactly this length are signed.
const NonceSize = 64

// PrivateKeyKey, with PublicKeyKey, are the keys of a gateway's key
// Secret: the raw 32-byte Curve25519 keys WireGuard uses.
const PrivateKeyKey = "privateKey"

// GatewayResourceName is the name of every object of the gateway name: its
// Deployment, Service, ServiceAccount, RoleBinding, key Secret and the
// Lease its replicas hold (pkg/gateway, election.go). A
// peering user's role names them to reach no other.
func GatewayResourceName(name string) string { return "gw-" + name }

// TenantNamespace is the name of the namespace holding everything about the
// peering with remoteClusterID, on either side.
func TenantNamespace(remoteClusterID string) string {
	return tenantNamespacePrefix + remoteClusterID
}

// StorageNamespaceLabel (value "true") marks the namespace of the storage
// fabric's real PVCs, which liqoctl uninstall --purge removes.
const StorageNamespaceLabel = "liqo.io/storage-namespace"

// NamespaceMapKey is where a consumer keeps its NamespaceMap for provider:
// one per provider, in the provider's tenant namespace, named after the
// provider. Its spec.desiredMapping lists the namespaces offloaded there
// (local name → twin name); its status.currentMapping, copied back from the
// provider, the twins that exist (phase Accepted) or cannot be made.
func NamespaceMapKey(provider string) types.NamespacedName {
	return types.NamespacedName{Namespace: TenantNamespace(provider), Name: provider}
}

// ClusterIDOfTenantNamespace is the inverse of TenantNamespace: the remote
// cluster a namespace belongs to, and false if it is no tenant namespace.
func ClusterIDOfTenantNamespace(namespace string) (string, bool) {
	id, ok := strings.CutPrefix(namespace, tenantNamespacePrefix)
	if !ok || id == "" {
		return "", false
	}
	return id, true
}

const tenantNamespacePrefix = "liqo-tenant-"

// StorageNamespace is the default namespace of the storage fabric's real
// PVCs.
const StorageNamespace = "liqo-storage"

// Annotations of the storage fabric, which liqoctl move volume and
// unoffload read too.
const (
	// RemoteStorageClassAnnotation on a PVC names the provider's class
	// its remote PVC gets (default: the provider's default class).
	RemoteStorageClassAnnotation = "liqo.io/remote-storage-class"
	// Annotations of a virtual PV saying what backs it: a PVC on the
	// provider RemoteClusterAnnotation, in its RemoteNamespaceAnnotation,
	// or a local real PVC (RealPVCAnnotation).
	RemoteClusterAnnotation   = "storage.liqo.io/remote-cluster-id"
	RemoteNamespaceAnnotation = "storage.liqo.io/remote-namespace"
	RealPVCAnnotation         = "storage.liqo.io/real-pvc"
)

// ReservedNamespace tells the namespaces no offloading ever extends to a
// peer, whatever a NamespaceOffloading or a NamespaceMap says: Kubernetes'
// own (kube-*) and Liqo's (liqoNamespace, where the controller manager
// runs and keeps the cluster's identity key, the default liqo, the tenant
// namespaces and the storage namespace). Their Secrets are the cluster's
// credentials. default is not reserved: the user's guide offloads it; nor
// is a name merely starting with liqo (the guide's liqo-demo).
func ReservedNamespace(name, liqoNamespace string) bool {
	return strings.HasPrefix(name, "kube-") || name == liqoNamespace || name == DefaultNamespace ||
		strings.HasPrefix(name, tenantNamespacePrefix) || name == StorageNamespace
}

// ConsumerUser is the Kubernetes user name (certificate CN) a consumer's
// control plane authenticates as on its provider.
func ConsumerUser(consumerClusterID string) string {
	return "liqo-consumer-" + consumerClusterID
}

// ConsumerGroup is the organisation every consumer certificate carries.
const ConsumerGroup = "liqo.io:consumers"

// IdentityName is the name of the consumer's control-plane Identity for a
// provider.
func IdentityName(providerClusterID string) string {
	return "controlplane-" + providerClusterID
}

// KubeconfigSecretName is the Secret holding the kubeconfig built from an
// Identity.
func KubeconfigSecretName(identityName string) string {
	return fmt.Sprintf("liqo-kubeconfig-%s", identityName)
}

// ValidateClusterID checks that id can name a cluster: a DNS label short
// enough for the tenant namespace named after it.
func ValidateClusterID(id string) error {
	if errs := validation.IsDNS1123Label(id); len(errs) > 0 {
		return fmt.Errorf("cluster ID %q is not a DNS label: %s", id, strings.Join(errs, "; "))
	}
	if n := len(TenantNamespace(id)); n > validation.DNS1123LabelMaxLength {
		return fmt.Errorf("cluster ID %q is too long: its tenant namespace name would have %d characters, the limit is %d",
			id, n, validation.DNS1123LabelMaxLength)
	}
	return nil
}
