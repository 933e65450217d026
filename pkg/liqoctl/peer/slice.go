package peer

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	slicepolicy "github.com/liqo-go/liqo/pkg/controllermanager/slices"
	"github.com/liqo-go/liqo/pkg/liqoctl/wait"
)

// sliceName is the consumer's ResourceSlice for this provider, and the name
// of the virtual node it yields.
func (p *peering) sliceName() string { return p.remote.ID }

// ensureResourceSlice asks the provider for resources and waits for its
// decision, reporting it as the documentation shows.
func (o *Options) ensureResourceSlice(ctx context.Context, p *peering, requested corev1.ResourceList) error {
	o.out.Step("Creating ResourceSlice")
	start := time.Now()
	s := &authv1beta1.ResourceSlice{ObjectMeta: metav1.ObjectMeta{Name: p.sliceName(), Namespace: p.localNS}}
	consumer, provider := corev1beta1.ClusterID(p.local.ID), corev1beta1.ClusterID(p.remote.ID)
	if _, err := controllerutil.CreateOrUpdate(ctx, o.Local.Client, s, func() error {
		s.Labels = map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.RemoteClusterIDLabel: p.remote.ID}
		s.Spec.ConsumerClusterID = &consumer
		s.Spec.ProviderClusterID = &provider
		s.Spec.Class = authv1beta1.DefaultResourceSliceClass
		s.Spec.Resources = requested
		return nil
	}); err != nil {
		return fmt.Errorf("creating the ResourceSlice: %w", err)
	}
	o.out.Timed(start, "ResourceSlice created")

	o.out.Step("Waiting for the provider to accept the ResourceSlice")
	start = time.Now()
	var authC, resC *authv1beta1.ResourceSliceCondition
	if err := wait.For(ctx, o.Local.Client, client.ObjectKeyFromObject(s), s, "the provider's decision on the ResourceSlice",
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
			if s.Annotations[slicepolicy.DecidedAnnotation] != slicepolicy.Canonical(requested) || authC == nil || resC == nil {
				return wait.NotYet("the provider has not decided on this request yet")
			}
			if authC.Status == authv1beta1.ResourceSliceAccepted && resC.Status == authv1beta1.ResourceSliceAccepted && len(s.Status.Resources) == 0 {
				return wait.NotYet("no resources in the status yet")
			}
			return nil
		}); err != nil {
		return err
	}
	o.out.Info("ResourceSlice authentication: %s", authC.Status)
	if authC.Status != authv1beta1.ResourceSliceAccepted {
		return fmt.Errorf("the provider did not authenticate the ResourceSlice: %s", authC.Message)
	}
	o.out.Info("ResourceSlice resources: %s", resC.Status)
	if resC.Status != authv1beta1.ResourceSliceAccepted {
		return fmt.Errorf("the provider denied the resources: %s", resC.Message)
	}
	p.granted = s.Status.Resources
	o.out.Timed(start, "Resources granted: %s (%s)", formatResources(s.Status.Resources), resC.Message)
	return nil
}

func formatResources(l corev1.ResourceList) string {
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
