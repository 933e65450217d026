package shadowendpointslice

import (
	"k8s.io/apimachinery/pkg/api/meta"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/kit"
)

// ConditionReady is the one condition of a ShadowEndpointSlice: True when
// its EndpointSlice matches the template, False with a reason otherwise.
const ConditionReady = "Ready"

// Reasons of the Ready condition.
const (
	// ReasonSynced: the EndpointSlice exists and matches the template.
	ReasonSynced = "Synced"
	// ReasonConflict: an EndpointSlice of that name exists and is not
	// controlled by the ShadowEndpointSlice, so it is left alone.
	ReasonConflict = "Conflict"
	// ReasonOriginMismatch: the ShadowEndpointSlice does not come from the
	// consumer its namespace was made for, so it gets no EndpointSlice.
	ReasonOriginMismatch = "OriginMismatch"
	// ReasonRejected: the API server refused the EndpointSlice (an
	// invalid template, admission); only a new template can help.
	ReasonRejected = "Rejected"
	// ReasonAddressRefused is the Warning Event of addresses left out of
	// the slice: outside the consumer's CIDRs as the network fabric maps
	// them.
	ReasonAddressRefused = "AddressRefused"
	// ReasonTerminating: the previous EndpointSlice is being deleted (its
	// address type changed, which an EndpointSlice cannot); the new one is
	// created as soon as it is gone.
	ReasonTerminating = "Terminating"
)

// Events recorded on the ShadowEndpointSlice, on entering the condition of
// the same reason: endpoints change often, and an Event per write would
// flood the namespace.
const (
	EventConflict       = ReasonConflict
	EventOriginMismatch = ReasonOriginMismatch
	EventRejected       = ReasonRejected
)

// outcome is what a reconcile found; updateStatus turns it into the status.
type outcome struct {
	// reason of the Ready condition: ReasonSynced for True, any other for
	// False.
	reason, message string
	// endpoints is the number of endpoints of the kept EndpointSlice.
	endpoints int
}

func synced(endpoints int) outcome {
	return outcome{reason: ReasonSynced, message: "the EndpointSlice matches the template", endpoints: endpoints}
}

// updateStatus sets the whole status from a reconcile's outcome; an
// unchanged outcome gives an identical status and no write (see
// kit.SetCondition).
func updateStatus(ses *offv1beta1.ShadowEndpointSlice, o outcome) {
	ses.Status.Endpoints = int32(o.endpoints) // an EndpointSlice holds at most 1000
	kit.SetCondition(&ses.Status.Conditions, ses.Generation, kit.Condition{
		Type: ConditionReady, OK: o.reason == ReasonSynced, Reason: o.reason, Message: o.message,
	})
}

// readyReason is the reason of the Ready condition, "" if none is set.
func readyReason(ses *offv1beta1.ShadowEndpointSlice) string {
	if c := meta.FindStatusCondition(ses.Status.Conditions, ConditionReady); c != nil {
		return c.Reason
	}
	return ""
}
