package webhook

import (
	"context"
	"fmt"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/liqo-go/liqo/pkg/webhook/quota"
)

// budgetGuard holds consumers' writes of the budgeted kinds to their
// ObjectBudget, with the same check-and-reserve as the Quotas: a burst of
// concurrent creates cannot all pass against one stale sum. Two replicas
// keep a ledger each, and see each other's admissions once stored, so
// together they pass a budget by at most the writes in flight at the
// other replica.
type budgetGuard struct {
	ledger *quota.Ledger[objectKey]
	budget ObjectBudget
	// synced tells whether the ledger holds every stored object.
	synced func() bool
}

// admit reserves the footprint of obj, which consumer creates or updates
// as resource in req, or says why it may not ("" if it may). old is the
// object before an update, nil on create. A write that does not grow the
// object is always admitted, so that a budget lowered below its usage
// never blocks the updates that shrink an object or end its life (a
// finalizer removed).
func (g *budgetGuard) admit(ctx context.Context, req admission.Request, consumer string, resource schema.GroupResource,
	obj, old client.Object) (string, error) {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return "", nil
	}
	size, err := sizeOf(obj)
	if err != nil {
		return "", err
	}
	if old != nil {
		was, err := sizeOf(old)
		if err != nil {
			return "", err
		}
		if size <= was {
			return "", nil
		}
	}
	if err := waitSynced(ctx, g.synced, "the objects' sizes"); err != nil {
		return "", err
	}
	key := objectKey{Resource: resource, NamespacedName: types.NamespacedName{Namespace: req.Namespace, Name: obj.GetName()}}
	check := g.ledger.Reserve
	if req.DryRun != nil && *req.DryRun {
		// As for ShadowPods: a dry run reserves nothing.
		check = g.ledger.Check
	}
	kind, _ := budgetedKindOf(resource)
	err = check(consumer, key, footprint(size, !kind.uncounted), g.budget.limit())
	if why, refused := budgetRefusal(consumer, err); refused {
		return why, nil
	}
	return "", err
}

// respond is admit's answer as the webhooks give it: allowed, denied with
// the refusal, or an error (the ledger not loaded yet, an object that
// cannot be measured) the API server retries or reports.
func (g *budgetGuard) respond(ctx context.Context, req admission.Request, consumer string, resource schema.GroupResource,
	obj, old client.Object) admission.Response {
	switch why, err := g.admit(ctx, req, consumer, resource, obj, old); {
	case err != nil:
		return admission.Errored(http.StatusServiceUnavailable, err)
	case why != "":
		return admission.Denied(why)
	}
	return admission.Allowed("")
}

// waitSynced waits, within the request's deadline, until synced: a ledger
// holds every stored object of its kinds (what, for the error). Admitting
// against a partial sum would overcommit.
func waitSynced(ctx context.Context, synced func() bool, what string) error {
	if synced() {
		return nil
	}
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) { return synced(), nil })
	if err != nil {
		return fmt.Errorf("the webhook is starting and has not loaded %s yet: retry", what)
	}
	return nil
}

// BudgetGuard is the check the webhooks run on a consumer's write against
// its ObjectBudget, over a ledger fed by hand rather than by a cluster's
// informers: for the fuzz targets, which play the API server and the
// informer around it.
type BudgetGuard struct{ g budgetGuard }

// NewBudgetGuard is a guard of budget over an empty ledger.
func NewBudgetGuard(budget ObjectBudget) *BudgetGuard {
	return &BudgetGuard{budgetGuard{ledger: &quota.Ledger[objectKey]{}, budget: budget, synced: func() bool { return true }}}
}

// Admit is the webhooks' check of req, consumer's create or update of obj
// (old before an update): the refusal, "" if admitted.
func (b *BudgetGuard) Admit(ctx context.Context, req admission.Request, consumer string, obj, old client.Object) (string, error) {
	return b.g.admit(ctx, req, consumer, schema.GroupResource{Group: req.Resource.Group, Resource: req.Resource.Resource}, obj, old)
}

// Stored tells the guard obj is stored, as resource, for consumer.
func (b *BudgetGuard) Stored(consumer string, resource schema.GroupResource, obj client.Object) error {
	size, err := sizeOf(obj)
	if err != nil {
		return err
	}
	kind, _ := budgetedKindOf(resource)
	b.g.ledger.Observe(consumer, objectKey{Resource: resource, NamespacedName: client.ObjectKeyFromObject(obj)}, footprint(size, !kind.uncounted))
	return nil
}

// Deleted tells the guard obj, stored as resource for consumer, is gone.
func (b *BudgetGuard) Deleted(consumer string, resource schema.GroupResource, obj client.Object) {
	b.g.ledger.Forget(consumer, objectKey{Resource: resource, NamespacedName: client.ObjectKeyFromObject(obj)}, obj.GetUID(), nil)
}
