package teardown

import (
	"context"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Reasons of the Events on what is forced out.
const (
	// ReasonFinalizersRemoved: finalizers the provider did not put held an
	// object's deletion past the timeout, and were removed.
	ReasonFinalizersRemoved = "FinalizersRemoved"
	// ReasonPodsForceDeleted: pods still there past the timeout were
	// deleted at once.
	ReasonPodsForceDeleted = "PodsForceDeleted"
)

// objectReaper forces out a consumer's objects of one kind that have been
// terminating for longer than the timeout. The contract of its hooks:
// consumers tells which objects are a consumer's (the others are never
// touched); before, if set, runs first on each overdue one (a ShadowPod's
// pod is deleted at once) and reports what it did for the Event.
type objectReaper[T client.Object] struct {
	client   client.Client
	recorder record.EventRecorder
	timeout  time.Duration
	now      func() time.Time

	newObj    func() T
	gk        schema.GroupKind
	consumers func(T) bool
	before    func(context.Context, T) (string, error)
}

func (r *objectReaper[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	o := r.newObj()
	if err := r.client.Get(ctx, req.NamespacedName, o); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if o.GetDeletionTimestamp().IsZero() || !r.consumers(o) {
		return ctrl.Result{}, nil
	}
	if wait := overdue(o.GetDeletionTimestamp().Time, r.now(), r.timeout); wait > 0 {
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	if r.before != nil {
		did, err := r.before(ctx, o)
		if err != nil {
			return ctrl.Result{}, err
		}
		if did != "" {
			r.recorder.Eventf(o, corev1.EventTypeWarning, ReasonPodsForceDeleted, "%s: %s %s had been terminating for more than %s (--teardown-timeout)",
				did, r.gk.Kind, o.GetName(), r.timeout)
		}
	}
	gone, err := strip(ctx, r.client, o, r.gk)
	if err != nil {
		return ctrl.Result{}, err
	}
	if len(gone) > 0 {
		r.recorder.Eventf(o, corev1.EventTypeWarning, ReasonFinalizersRemoved,
			"removed finalizers %s, which this provider did not put: they had held the deletion of %s %s for more than %s (--teardown-timeout)",
			strings.Join(gone, ", "), r.gk.Kind, o.GetName(), r.timeout)
	}
	return ctrl.Result{}, nil
}

// setup registers r for the terminating objects of its kind.
func (r *objectReaper[T]) setup(mgr ctrl.Manager, name string) error {
	terminating := predicate.NewPredicateFuncs(func(o client.Object) bool { return !o.GetDeletionTimestamp().IsZero() })
	return ctrl.NewControllerManagedBy(mgr).Named(name).
		For(r.newObj(), builder.WithPredicates(terminating)).
		Complete(r)
}
