package podplacement

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// ReasonOffloadingConflict is the reason of the Event on a pod whose node
// constraints contradict its namespace's pod offloading strategy.
const ReasonOffloadingConflict = "OffloadingConflict"

// conflictReporter turns the webhook's ConflictAnnotation into a Warning
// Event on the pod. The webhook cannot emit it itself: `kubectl describe
// pod` finds Events by the pod's UID, which does not exist yet when a pod is
// admitted.
type conflictReporter struct {
	// pods is a cache of the pods carrying ConflictLabel only: a cluster
	// may have many pods and few conflicts, and the manager's own Pod
	// cache is limited to the pods of ShadowPods.
	pods     client.Reader
	client   client.Client
	recorder record.EventRecorder
}

// Reconcile reports one marked pod, then unmarks it, which also drops it
// from the cache.
func (r *conflictReporter) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	var pod corev1.Pod
	if err := r.pods.Get(ctx, req.NamespacedName, &pod); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if _, marked := pod.Labels[ConflictLabel]; !marked {
		return ctrl.Result{}, nil
	}
	msg := pod.Annotations[ConflictAnnotation]
	if msg == "" {
		msg = "the pod's node constraints contradict the pod offloading strategy of its namespace"
	}
	r.recorder.Event(&pod, corev1.EventTypeWarning, ReasonOffloadingConflict, msg)
	patch := client.MergeFrom(pod.DeepCopy())
	delete(pod.Labels, ConflictLabel)
	return ctrl.Result{}, client.IgnoreNotFound(r.client.Patch(ctx, &pod, patch))
}

// SetupConflictReporter runs the reporter, with its own narrow Pod cache.
func SetupConflictReporter(mgr manager.Manager) error {
	marked, err := labels.NewRequirement(ConflictLabel, selection.Exists, nil)
	if err != nil {
		return err
	}
	pods, err := cache.New(mgr.GetConfig(), cache.Options{
		Scheme:               mgr.GetScheme(),
		Mapper:               mgr.GetRESTMapper(),
		DefaultLabelSelector: labels.NewSelector().Add(*marked),
		DefaultTransform:     cache.TransformStripManagedFields(),
	})
	if err != nil {
		return err
	}
	if err := mgr.Add(pods); err != nil {
		return err
	}
	r := &conflictReporter{pods: pods, client: mgr.GetClient(), recorder: mgr.GetEventRecorderFor("liqo-webhook")}
	return ctrl.NewControllerManagedBy(mgr).Named("pod-offloading-conflicts").
		WatchesRawSource(source.Kind(pods, &corev1.Pod{}, &handler.TypedEnqueueRequestForObject[*corev1.Pod]{})).
		Complete(r)
}
