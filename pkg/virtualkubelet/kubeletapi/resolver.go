package kubeletapi

import (
	"context"
	"fmt"

	"github.com/virtual-kubelet/virtual-kubelet/errdefs"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// Resolver tells where the pod namespace/name of this cluster really runs.
// The Server calls it once to authorize a request and once to serve it, from
// many goroutines at once. An error that errdefs.IsNotFound reports (the pod
// does not exist, is not offloaded, its namespace has no twin) becomes a 404.
type Resolver interface {
	Resolve(ctx context.Context, namespace, name string) (*Target, error)
}

// Target is the remote twin of a local pod.
type Target struct {
	// Node is the virtual node the local pod is bound to.
	Node string
	// Config reaches the provider's API server with the consumer's
	// credentials there; Clientset is built from it, once per version of
	// the credentials (remotecluster.Cluster).
	Config    *rest.Config
	Clientset kubernetes.Interface
	// Namespace and Name are the twin pod's on the provider.
	Namespace, Name string
}

// PodResolver resolves local pods through the objects of the local cluster:
// the pod's node, the node's remote cluster ID label, the consumer's
// clients for that provider (Remotes) and the NamespaceMap that names the
// twin namespace. The twin pod has the local pod's name.
type PodResolver struct {
	// Reader reads Pods, Nodes and NamespaceMaps. A controller manager's
	// cache holds only its own Pods, so this is typically its API reader.
	Reader client.Reader
	// Remotes gives the providers' clients.
	Remotes *remotecluster.Registry
}

var _ Resolver = (*PodResolver)(nil)

// Resolve implements Resolver.
func (r *PodResolver) Resolve(ctx context.Context, namespace, name string) (*Target, error) {
	var pod corev1.Pod
	if err := r.Reader.Get(ctx, types.NamespacedName{Namespace: namespace, Name: name}, &pod); err != nil {
		return nil, notFoundAs(err, "pod %s/%s", namespace, name)
	}
	if pod.Spec.NodeName == "" {
		return nil, errdefs.NotFoundf("pod %s/%s is not scheduled on a node", namespace, name)
	}
	var node corev1.Node
	if err := r.Reader.Get(ctx, types.NamespacedName{Name: pod.Spec.NodeName}, &node); err != nil {
		return nil, notFoundAs(err, "node %s of pod %s/%s", pod.Spec.NodeName, namespace, name)
	}
	provider := node.Labels[consts.RemoteClusterIDLabel]
	if node.Labels[consts.TypeLabel] != consts.TypeVirtualNode || provider == "" {
		return nil, errdefs.NotFoundf("pod %s/%s runs on node %s, which is not a virtual node", namespace, name, node.Name)
	}
	conn, err := r.Remotes.Get(ctx, provider)
	if err != nil {
		return nil, fmt.Errorf("credentials for cluster %s of pod %s/%s: %w", provider, namespace, name, err)
	}
	var nm offv1beta1.NamespaceMap
	if err := r.Reader.Get(ctx, consts.NamespaceMapKey(provider), &nm); err != nil {
		return nil, notFoundAs(err, "namespace map of cluster %s", provider)
	}
	twin := nm.Status.CurrentMapping[namespace].RemoteNamespace
	if twin == "" {
		return nil, errdefs.NotFoundf("namespace %s has no twin namespace in cluster %s", namespace, provider)
	}
	return &Target{Node: node.Name, Config: conn.Config, Clientset: conn.Clientset, Namespace: twin, Name: name}, nil
}

// notFoundAs describes err with what was read, keeping a NotFound a
// NotFound for the HTTP status.
func notFoundAs(err error, format string, args ...any) error {
	what := fmt.Sprintf(format, args...)
	if apierrors.IsNotFound(err) {
		return errdefs.NotFoundf("%s not found", what)
	}
	return fmt.Errorf("reading %s: %w", what, err)
}
