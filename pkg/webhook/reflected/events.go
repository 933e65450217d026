package reflected

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/budget"
	"github.com/liqo-go/liqo/pkg/webhook/quota"
	"github.com/liqo-go/liqo/pkg/webhook/tenancy"
)

// EventTTL is how long the API server keeps an Event (kube-apiserver's
// --event-ttl, by default): how long a consumer's Event counts.
const EventTTL = time.Hour

// eventValidator holds the Events a consumer records in its tenant
// namespace on a provider (its controllers', about its replicas there) to
// its budget.ObjectBudget, apart from its other objects: an Event of the legacy
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
	ledger *quota.Ledger[budget.ObjectKey]
	budget budget.ObjectBudget
}

var _ admission.Handler = (*eventValidator)(nil)

// NewEventValidator is the handler of the Events consumers record, each
// counted for EventTTL against objects.
func NewEventValidator(objects budget.ObjectBudget) admission.Handler {
	return &eventValidator{ledger: &quota.Ledger[budget.ObjectKey]{TTL: EventTTL}, budget: objects}
}

// Handle validates a consumer's create or update of an Event.
func (v *eventValidator) Handle(_ context.Context, req admission.Request) admission.Response {
	id, _, answer := tenancy.ConsumerWrite(req, "Events'", tenancy.EventsResource, tenancy.EventsV1Resource)
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
	if bad, err := VetEventReferences(id, req.Object.Raw); err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	} else if len(bad) > 0 {
		return admission.Denied(strings.Join(bad, "; ") + " [rule: " + eventRule + "]")
	}
	name := meta.Name
	if name == "" {
		name = string(req.UID)
	}
	key := budget.ObjectKey{Resource: tenancy.EventsResource, NamespacedName: types.NamespacedName{Namespace: req.Namespace, Name: name}}
	check := v.ledger.Reserve
	if req.DryRun != nil && *req.DryRun {
		check = v.ledger.Check
	}
	err = check(id, key, budget.Footprint(int64(len(req.Object.Raw)), true), v.budget.Limit())
	var exceeded *quota.ExceededError
	if errors.As(err, &exceeded) {
		return admission.Denied(fmt.Sprintf("%v: consumer %s recorded as many Events on this provider in the last %s as it may "+
			"(Events count apart from its other objects, each for as long as the API server keeps it) [rule: %s]",
			err, id, EventTTL, budget.Rule(exceeded)))
	}
	if err != nil {
		return admission.Errored(http.StatusInternalServerError, err)
	}
	return admission.Allowed("")
}

// eventRule is the rule refusing an Event about what a consumer does not
// hold, named in refusals.
const eventRule = "the provider's Event rule (fixed: a consumer's Events are about its objects in its tenant namespace)"

// eventReferences are the objects an Event is about, in either API: the
// legacy involvedObject, events.k8s.io's regarding, and related.
type eventReferences struct {
	InvolvedObject *corev1.ObjectReference `json:"involvedObject,omitempty"`
	Regarding      *corev1.ObjectReference `json:"regarding,omitempty"`
	Related        *corev1.ObjectReference `json:"related,omitempty"`
}

// VetEventReferences lists what is wrong with the objects the Event in raw
// (JSON, of either API), which consumer id records, is about: each must be
// an object of the consumer's tenant namespace, where its controllers
// record what they do to its replicas. An Event about a provider's Node,
// or a pod of kube-system, would be read by the provider's administrators,
// their event exporters and alerts as the cluster's own word about that
// object. (The API server lets an Event with an eventTime, and any
// related object, name objects of other namespaces, or none.)
func VetEventReferences(id string, raw []byte) ([]string, error) {
	var refs eventReferences
	if err := json.Unmarshal(raw, &refs); err != nil {
		return nil, fmt.Errorf("decoding the Event: %w", err)
	}
	own := consts.TenantNamespace(id)
	var bad []string
	for _, r := range []struct {
		field string
		ref   *corev1.ObjectReference
	}{{"involvedObject", refs.InvolvedObject}, {"regarding", refs.Regarding}, {"related", refs.Related}} {
		switch {
		case r.ref == nil || *r.ref == (corev1.ObjectReference{}):
			// events.k8s.io's related is optional; an empty reference is
			// about nothing.
		case r.ref.Kind == "Node":
			bad = append(bad, fmt.Sprintf("%s names Node %q: consumer %s may record Events only about its objects in %s, not about the provider's nodes",
				r.field, r.ref.Name, id, own))
		case r.ref.Namespace != own:
			bad = append(bad, fmt.Sprintf("%s names %s %q in namespace %q: consumer %s may record Events only about its objects in %s",
				r.field, r.ref.Kind, r.ref.Name, r.ref.Namespace, id, own))
		}
	}
	return bad, nil
}
