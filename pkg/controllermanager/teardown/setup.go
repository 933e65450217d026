package teardown

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/deploy/charts/liqo/files/rbac"
	"github.com/liqo-go/liqo/pkg/consts"
)

// Setup adds the controllers that force out a consumer's objects past
// o.Timeout: its ShadowPods (a drain) with their pods, its replicated
// NamespaceMaps and ResourceSlices (an unpeering), and the content of its
// twin namespaces (an unpeering, or a map no longer asking for them).
// twinRole is the ClusterRole consumers have in their twins: the kinds it
// lets them write are the kinds whose finalizers are looked at there.
func Setup(mgr ctrl.Manager, o Options, twinRole string) error {
	role, err := rbac.ClusterRole(twinRole)
	if err != nil {
		return fmt.Errorf("reading the rules of ClusterRole %s: %w", twinRole, err)
	}
	c := mgr.GetClient()
	recorder := mgr.GetEventRecorderFor("liqo-teardown")
	timeout := o.timeout()
	shadowPods := &objectReaper[*offv1beta1.ShadowPod]{client: c, recorder: recorder, timeout: timeout, now: time.Now,
		newObj: func() *offv1beta1.ShadowPod { return &offv1beta1.ShadowPod{} },
		gk:     offv1beta1.GroupVersion.WithKind("ShadowPod").GroupKind(),
		// The webhook admits a consumer's ShadowPod only with its origin.
		consumers: func(sp *offv1beta1.ShadowPod) bool { return sp.Labels[consts.OriginClusterIDLabel] != "" },
		before: func(ctx context.Context, sp *offv1beta1.ShadowPod) (string, error) {
			return forceDeletePodOf(ctx, c, sp)
		},
	}
	replicated := func(o client.Object) bool {
		_, tenant := consts.ClusterIDOfTenantNamespace(o.GetNamespace())
		return tenant && o.GetLabels()[consts.ReplicationLabel] == "true"
	}
	maps := &objectReaper[*offv1beta1.NamespaceMap]{client: c, recorder: recorder, timeout: timeout, now: time.Now,
		newObj:    func() *offv1beta1.NamespaceMap { return &offv1beta1.NamespaceMap{} },
		gk:        offv1beta1.GroupVersion.WithKind("NamespaceMap").GroupKind(),
		consumers: func(m *offv1beta1.NamespaceMap) bool { return replicated(m) },
	}
	slices := &objectReaper[*authv1beta1.ResourceSlice]{client: c, recorder: recorder, timeout: timeout, now: time.Now,
		newObj:    func() *authv1beta1.ResourceSlice { return &authv1beta1.ResourceSlice{} },
		gk:        authv1beta1.GroupVersion.WithKind("ResourceSlice").GroupKind(),
		consumers: func(s *authv1beta1.ResourceSlice) bool { return replicated(s) },
	}
	twins := &namespaceReaper{client: c, reader: mgr.GetAPIReader(), mapper: mgr.GetRESTMapper(), recorder: recorder,
		timeout: timeout, now: time.Now, rules: role.Rules}
	for _, err := range []error{
		shadowPods.setup(mgr, "teardown-shadowpods"),
		maps.setup(mgr, "teardown-namespacemaps"),
		slices.setup(mgr, "teardown-resourceslices"),
		twins.setup(mgr),
	} {
		if err != nil {
			return err
		}
	}
	return nil
}

// forceDeletePodOf deletes the pod of a ShadowPod at once (grace 0), if it
// is still there.
func forceDeletePodOf(ctx context.Context, c client.Client, sp *offv1beta1.ShadowPod) (string, error) {
	var pod corev1.Pod
	if err := c.Get(ctx, client.ObjectKeyFromObject(sp), &pod); err != nil {
		return "", client.IgnoreNotFound(err)
	}
	if ref := metav1.GetControllerOf(&pod); ref == nil || ref.UID != sp.UID {
		return "", nil
	}
	err := c.Delete(ctx, &pod, client.GracePeriodSeconds(0), client.Preconditions{UID: ptr.To(pod.UID)})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("deleting pod %s at once: %w", client.ObjectKeyFromObject(&pod), err)
	}
	return "deleted pod " + pod.Name + " at once", nil
}
