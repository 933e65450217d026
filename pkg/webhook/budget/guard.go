package budget

import (
	"context"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/liqo-go/liqo/pkg/webhook/quota"
)

// Guard holds consumers' writes of the budgeted kinds to their
// ObjectBudget, with the same check-and-reserve as the Quotas: a burst of
// concurrent creates cannot all pass against one stale sum. Two replicas
// keep a ledger each, and see each other's admissions once stored, so
// together they pass a budget by at most the writes in flight at the
// other replica.
type Guard struct {
	ledger *quota.Ledger[ObjectKey]
	budget ObjectBudget
	// synced tells whether the ledger holds every stored object.
	synced func() bool
}

// Admit reserves the Footprint of obj, which consumer creates or updates
// as resource in req, or says why it may not ("" if it may). old is the
// object before an update, nil on create. A write that does not grow the
// object is always admitted, so that a budget lowered below its usage
// never blocks the updates that shrink an object or end its life (a
// finalizer removed).
func (g *Guard) Admit(ctx context.Context, req admission.Request, consumer string, resource schema.GroupResource,
	obj, old client.Object) (string, error) {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return "", nil
	}
	size, err := SizeOf(obj)
	if err != nil {
		return "", err
	}
	if old != nil {
		was, err := SizeOf(old)
		if err != nil {
			return "", err
		}
		if size <= was {
			return "", nil
		}
	}
	if err := quota.WaitSynced(ctx, g.synced, "the objects' sizes"); err != nil {
		return "", err
	}
	key := ObjectKey{Resource: resource, NamespacedName: types.NamespacedName{Namespace: req.Namespace, Name: obj.GetName()}}
	check := g.ledger.Reserve
	if req.DryRun != nil && *req.DryRun {
		// As for ShadowPods: a dry run reserves nothing.
		check = g.ledger.Check
	}
	kind, _ := budgetedKindOf(resource)
	err = check(consumer, key, Footprint(size, !kind.uncounted), g.budget.Limit())
	if why, refused := budgetRefusal(consumer, err); refused {
		return why, nil
	}
	return "", err
}

// Respond is Admit's answer as the webhooks give it: allowed, denied with
// the refusal, or an error (the ledger not loaded yet, an object that
// cannot be measured) the API server retries or reports.
func (g *Guard) Respond(ctx context.Context, req admission.Request, consumer string, resource schema.GroupResource,
	obj, old client.Object) admission.Response {
	switch why, err := g.Admit(ctx, req, consumer, resource, obj, old); {
	case err != nil:
		return admission.Errored(http.StatusServiceUnavailable, err)
	case why != "":
		return admission.Denied(why)
	}
	return admission.Allowed("")
}

// New is a guard of budget over an empty ledger fed by hand (Stored,
// Deleted) rather than by a cluster's informers: for the handlers' unit
// tests and the fuzz targets, which play the API server and the informer
// around it.
func New(budget ObjectBudget) *Guard {
	return &Guard{ledger: &quota.Ledger[ObjectKey]{}, budget: budget, synced: func() bool { return true }}
}

// Watch is the guard of budget (DefaultObjectBudget if zero), its ledger
// fed from mgr's cluster; report, when set, shows the ledger's usage.
func Watch(mgr manager.Manager, budget ObjectBudget, report *Report) (*Guard, error) {
	if budget.MaxCount == 0 && budget.MaxBytes.IsZero() {
		budget = DefaultObjectBudget()
	}
	ledger := &quota.Ledger[ObjectKey]{}
	if report != nil {
		ledger.OnChange = report.changed
	}
	synced, err := feedBudget(mgr, ledger)
	if err != nil {
		return nil, err
	}
	g := &Guard{ledger: ledger, budget: budget, synced: synced}
	if report != nil {
		report.guard.Store(g)
	}
	return g, nil
}

// Budget is the budget the guard holds consumers to.
func (g *Guard) Budget() ObjectBudget { return g.budget }

// Stored tells the guard obj is stored, as resource, for consumer.
func (g *Guard) Stored(consumer string, resource schema.GroupResource, obj client.Object) error {
	size, err := SizeOf(obj)
	if err != nil {
		return err
	}
	kind, _ := budgetedKindOf(resource)
	g.ledger.Observe(consumer, ObjectKey{Resource: resource, NamespacedName: client.ObjectKeyFromObject(obj)}, Footprint(size, !kind.uncounted))
	return nil
}

// Deleted tells the guard obj, stored as resource for consumer, is gone.
func (g *Guard) Deleted(consumer string, resource schema.GroupResource, obj client.Object) {
	g.ledger.Forget(consumer, ObjectKey{Resource: resource, NamespacedName: client.ObjectKeyFromObject(obj)}, obj.GetUID(), nil)
}
