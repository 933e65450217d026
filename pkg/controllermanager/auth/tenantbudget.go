package auth

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/webhook/budget"
)

// BudgetSource tells each consumer's ObjectBudget usage, as the webhooks
// that enforce the budget count it (budget.Report).
type BudgetSource interface {
	// Usage is consumer's usage, false while it is not known.
	Usage(consumer string) (budget.Usage, bool)
	// Notify has fn called, without blocking, with every consumer whose
	// usage changes.
	Notify(fn func(consumer string))
}

// The reasons of the ObjectBudgetPressure condition.
const (
	ReasonWithinBudget        = "WithinBudget"
	ReasonObjectBudgetNear    = "ObjectBudgetNearLimit"
	ReasonObjectBudgetReached = "ObjectBudgetExhausted"
)

// budgetReportDelay batches the status writes of a burst of objects.
const budgetReportDelay = time.Second

// budgetNearPercent is the usage, of bytes or of objects, from which the
// budget is near its limit: the consumer's administrator is warned while
// its reflection still works.
const budgetNearPercent = 90

// BudgetStatus is the Tenant's view of usage u: the amounts, and the
// ObjectBudgetPressure condition, True from budgetNearPercent of either
// amount (exhausted when either is reached).
func BudgetStatus(u budget.Usage) (authv1beta1.ObjectBudgetUsage, kit.Condition) {
	s := authv1beta1.ObjectBudgetUsage{
		UsedBytes: *resource.NewQuantity(u.Bytes, resource.BinarySI), MaxBytes: *resource.NewQuantity(u.MaxBytes, resource.BinarySI),
		UsedObjects: u.Objects, MaxObjects: u.MaxObjects,
	}
	summary := fmt.Sprintf("%d of %d objects, %s of %s", u.Objects, u.MaxObjects, s.UsedBytes.String(), s.MaxBytes.String())
	c := kit.Condition{Type: authv1beta1.ObjectBudgetPressureCondition, Reason: ReasonWithinBudget,
		Message: "the consumer keeps " + summary + " on this provider"}
	switch {
	case u.Bytes >= u.MaxBytes || u.Objects >= u.MaxObjects:
		c.OK, c.Reason = true, ReasonObjectBudgetReached
		c.Message = "the consumer keeps as much on this provider as its object budget allows (" + summary +
			"): its further ConfigMaps, Secrets, Services, Ingresses, PersistentVolumeClaims, ShadowEndpointSlices and ShadowPods are refused " +
			"until it deletes some, or the provider raises --max-tenant-object-bytes or --max-tenant-objects"
	case u.Bytes*100 >= u.MaxBytes*budgetNearPercent || u.Objects*100 >= u.MaxObjects*budgetNearPercent:
		c.OK, c.Reason = true, ReasonObjectBudgetNear
		c.Message = "the consumer keeps nearly as much on this provider as its object budget allows (" + summary +
			"): its writes that do not fit are refused"
	}
	return s, c
}

// reportBudget writes the consumer's budget usage into t's status, with
// its condition, and an Event when the pressure condition changes; it
// writes nothing when nothing changed or no usage is known.
func (r *TenantReconciler) reportBudget(ctx context.Context, t *authv1beta1.Tenant) error {
	if r.Budget == nil {
		return nil
	}
	u, ok := r.Budget.Usage(string(t.Spec.ClusterID))
	if !ok {
		return nil
	}
	s, c := BudgetStatus(u)
	before := t.DeepCopy()
	t.Status.ObjectBudget = &s
	kit.SetCondition(&t.Status.Conditions, t.Generation, c)
	if equality.Semantic.DeepEqual(before.Status, t.Status) {
		return nil
	}
	if err := kit.PatchStatus(ctx, r.Client, t, before); err != nil {
		return fmt.Errorf("writing the object budget's usage: %w", err)
	}
	// An Event when the pressure starts, changes or ends; not on every
	// object written, nor for a Tenant that never had any.
	prev := meta.FindStatusCondition(before.Status.Conditions, c.Type)
	pressured := prev != nil && prev.Status == metav1.ConditionTrue
	if r.Recorder != nil && (prev == nil || prev.Reason != c.Reason) && (c.OK || pressured) {
		eventType := corev1.EventTypeNormal
		if c.OK {
			eventType = corev1.EventTypeWarning
		}
		r.Recorder.Event(t, eventType, c.Reason, c.Message)
	}
	return nil
}

// budgetChanges requeues a consumer's Tenant (named after it, in its
// tenant namespace) when its usage changes, a second later: a burst of
// writes makes one status update.
func (r *TenantReconciler) budgetChanges() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		r.Budget.Notify(func(consumer string) {
			q.AddAfter(reconcile.Request{NamespacedName: types.NamespacedName{Namespace: consts.TenantNamespace(consumer), Name: consumer}},
				budgetReportDelay)
		})
		return nil
	})
}
