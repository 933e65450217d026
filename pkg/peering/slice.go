package peering

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/wait"
)

// ForgeResourceSlice is the ResourceSlice named name by which consumer asks
// provider for requested, in the consumer's tenant namespace of the
// provider; with createVirtualNode false the consumer makes no
// VirtualNode of it once accepted.
func ForgeResourceSlice(consumer, provider, name string, requested corev1.ResourceList, createVirtualNode bool) *authv1beta1.ResourceSlice {
	c, p := corev1beta1.ClusterID(consumer), corev1beta1.ClusterID(provider)
	return &authv1beta1.ResourceSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: authv1beta1.GroupVersion.String(), Kind: "ResourceSlice"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: consts.TenantNamespace(provider),
			Labels:      map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: provider},
			Annotations: map[string]string{consts.CreateVirtualNodeAnnotation: strconv.FormatBool(createVirtualNode)}},
		Spec: authv1beta1.ResourceSliceSpec{
			ConsumerClusterID: &c,
			ProviderClusterID: &p,
			Class:             authv1beta1.DefaultResourceSliceClass,
			Resources:         requested,
		},
	}
}

// The provider's refusals of a ResourceSlice: of its authentication, of
// the resources it asks for.
var (
	ErrSliceNotAuthenticated = errors.New("the provider did not authenticate the ResourceSlice")
	ErrResourcesDenied       = errors.New("the provider denied the resources")
)

// EnsureResourceSlice creates or updates want on the consumer (c), which
// asks the provider for resources, and waits for the provider's decision,
// reporting it as the documentation shows. It returns the slice with the
// resources granted in its status, or an error saying why none were.
func EnsureResourceSlice(ctx context.Context, c client.Client, out Progress, want *authv1beta1.ResourceSlice) (*authv1beta1.ResourceSlice, error) {
	out.Step("Creating ResourceSlice")
	start := time.Now()
	s := &authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: want.Name, Namespace: want.Namespace}}
	if _, err := Apply(ctx, c, s, func() error {
		s.Labels = want.Labels
		for k, v := range want.Annotations {
			metav1.SetMetaDataAnnotation(&s.ObjectMeta, k, v)
		}
		s.Spec.ConsumerClusterID = want.Spec.ConsumerClusterID
		s.Spec.ProviderClusterID = want.Spec.ProviderClusterID
		s.Spec.Class = want.Spec.Class
		s.Spec.Resources = want.Spec.Resources
		return nil
	}); err != nil {
		return nil, fmt.Errorf("creating the ResourceSlice: %w", err)
	}
	out.Timed(start, "ResourceSlice created")
	// The provider marks its decision with the request as it decided it,
	// defaults included (ephemeral storage, which no flag names).
	requested := authv1beta1.WithDefaultResources(want.Spec.Resources)

	out.Step("Waiting for the provider to accept the ResourceSlice")
	start = time.Now()
	var authC, resC *authv1beta1.ResourceSliceCondition
	if err := wait.For(ctx, c, client.ObjectKeyFromObject(s), s, "the provider's decision on the ResourceSlice",
		func(s *authv1beta1.ResourceSlice) error {
			authC, resC = nil, nil
			for i := range s.Status.Conditions {
				switch c := &s.Status.Conditions[i]; c.Type {
				case authv1beta1.ResourceSliceAuthentication:
					authC = c
				case authv1beta1.ResourceSliceResources:
					resC = c
				}
			}
			if authC != nil && authC.Status != authv1beta1.ResourceSliceAccepted {
				return nil // not authenticated: no decision on resources will come
			}
			if s.Annotations[consts.DecidedAnnotation] != authv1beta1.CanonicalResources(requested) || authC == nil || resC == nil {
				return wait.NotYet("the provider has not decided on this request yet")
			}
			if authC.Status == authv1beta1.ResourceSliceAccepted && resC.Status == authv1beta1.ResourceSliceAccepted && len(s.Status.Resources) == 0 {
				return wait.NotYet("no resources in the status yet")
			}
			return nil
		}); err != nil {
		return nil, err
	}
	out.Info("ResourceSlice authentication: %s", authC.Status)
	if authC.Status != authv1beta1.ResourceSliceAccepted {
		return nil, fmt.Errorf("%w: %s", ErrSliceNotAuthenticated, authC.Message)
	}
	out.Info("ResourceSlice resources: %s", resC.Status)
	if resC.Status != authv1beta1.ResourceSliceAccepted {
		return nil, fmt.Errorf("%w: %s", ErrResourcesDenied, resC.Message)
	}
	out.Timed(start, "Resources granted: %s (%s)", FormatResources(s.Status.Resources), resC.Message)
	return s, nil
}

// FormatResources lists l as liqoctl prints it: cpu, memory and pods first.
func FormatResources(l corev1.ResourceList) string {
	first := []corev1.ResourceName{corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourcePods}
	var parts []string
	for _, name := range first {
		if q, ok := l[name]; ok {
			parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
		}
	}
	for _, name := range slices.Sorted(maps.Keys(l)) {
		if !slices.Contains(first, name) {
			q := l[name]
			parts = append(parts, fmt.Sprintf("%s=%s", name, q.String()))
		}
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, ", ")
}

// WaitVirtualNode waits for the Node name on the consumer (c) to be Ready
// and to offer granted (when given).
func WaitVirtualNode(ctx context.Context, c client.Client, out Progress, name string, granted corev1.ResourceList) error {
	out.Step("Waiting for the virtual node")
	start := time.Now()
	node := &corev1.Node{}
	if err := wait.For(ctx, c, types.NamespacedName{Name: name}, node, "the virtual node to be Ready",
		func(n *corev1.Node) error {
			// When a peering is resized, the node is Ready with its old size
			// until the virtual kubelet restarts with the new one.
			for name, q := range granted {
				if got := n.Status.Allocatable[name]; got.Cmp(q) != 0 {
					return wait.NotYet("node %s offers %s %s, %s granted", n.Name, got.String(), name, q.String())
				}
			}
			for _, c := range n.Status.Conditions {
				if c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue {
					return nil
				}
				if c.Type == corev1.NodeReady {
					return wait.NotYet("node %s is not Ready: %s", n.Name, c.Message)
				}
			}
			return wait.NotYet("node %s has no Ready condition yet", n.Name)
		}); err != nil {
		return err
	}
	out.Timed(start, "Virtual node %s is Ready", node.Name)
	return nil
}
