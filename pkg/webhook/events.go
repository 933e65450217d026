package webhook

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	eventsv1 "k8s.io/api/events/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/liqo-go/liqo/pkg/consts"
)

// The Events resources a consumer writes, in both API groups.
var (
	eventsResource   = schema.GroupResource{Resource: "events"}
	eventsV1Resource = schema.GroupResource{Group: eventsv1.GroupName, Resource: "events"}
)

// EventTTL is how long the API server keeps an Event (kube-apiserver's
// --event-ttl, by default): how long a consumer's Event counts.
const EventTTL = time.Hour

// eventValidator holds the Events a consumer records in its tenant
// namespace on a provider (its controllers', about its replicas there) to
// its ObjectBudget, apart from its other objects: an Event of the legacy
// API has no size limit, and a consumer recording Events of a megabyte
// would fill etcd within the hour they live.
//
// No informer feeds the ledger: a cluster records Events by the thousand,
// and a consumer's carry no mark to select them by. Each admitted Event is
// counted by its reservation, which lasts as long as the API server keeps
// the Event (EventTTL); an Event updated (a repeat counted in it) replaces
// its reservation. Each replica counts what it admitted since it started:
// two replicas, or a restart within the hour, let a consumer keep up to
// twice its budget of Events for that hour.
type eventValidator struct {
	// ledger counts with TTL EventTTL.
	ledger *Ledger[objectKey]
	budget ObjectBudget
}

var _ admission.Handler = (*eventValidator)(nil)

// Handle validates a consumer's create or update of an Event.
func (v *eventValidator) Handle(_ context.Context, req admission.Request) admission.Response {
	id, _, answer := consumerWrite(req, "Events'", eventsResource, eventsV1Resource)
	if answer != nil {
		return *answer
	}
	if own := consts.TenantNamespace(id); req.Namespace != own {
		return admission.Denied(fmt.Sprintf("consumer %s may record Events only in its tenant namespace %s, not in %q", id, own, req.Namespace))
	}
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	meta, err := objectMeta(req.Object.Raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	name := meta.Name
	if name == "" {
		name = string(req.UID)
	}
	key := objectKey{Resource: eventsResource, NamespacedName: types.NamespacedName{Namespace: req.Namespace, Name: name}}
	check := v.ledger.Reserve
	if req.DryRun != nil && *req.DryRun {
		check = v.ledger.Check
	}
	err = check(id, key, footprint(int64(len(req.Object.Raw)), true), v.budget.limit())
	var exceeded *ExceededError
	if errors.As(err, &exceeded) {
		return admission.Denied(fmt.Sprintf("%v: consumer %s recorded as many Events on this provider in the last %s as it may "+
			"(Events count apart from its other objects, each for as long as the API server keeps it) [rule: %s]",
			err, id, EventTTL, budgetRule(exceeded)))
	}
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.Allowed("")
}
