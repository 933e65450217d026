package kit

import (
	"regexp"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MaxConditionMessage is the longest condition message the API server
// takes; longer ones are cut and end with "...".
const MaxConditionMessage = 32768

// reasonPattern is what the API server accepts as a condition reason.
var reasonPattern = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)

// Condition is one condition to set: True when OK, False otherwise, and
// Unknown when Unknown (whatever OK says): the state cannot be told.
type Condition struct {
	Type    string
	OK      bool
	Unknown bool
	Reason  string
	Message string
}

// ValidReason tells whether the API server takes reason as a condition
// reason.
func ValidReason(reason string) bool { return reasonPattern.MatchString(reason) }

// SetCondition sets c in conds for an object at generation gen. A reason
// the API server would refuse becomes fallback (so a status write never
// fails on a reason copied from elsewhere), an overlong message is cut,
// and the transition time moves only when the status changes: setting the
// same outcome twice leaves conds identical, hence no write. It reports
// whether conds changed.
func SetCondition(conds *[]metav1.Condition, gen int64, c Condition) bool {
	status := metav1.ConditionFalse
	switch {
	case c.Unknown:
		status = metav1.ConditionUnknown
	case c.OK:
		status = metav1.ConditionTrue
	}
	reason := c.Reason
	if !reasonPattern.MatchString(reason) {
		reason = "Unknown"
		if c.OK {
			reason = "Ready"
		}
	}
	return meta.SetStatusCondition(conds, metav1.Condition{
		Type: c.Type, Status: status, Reason: reason, Message: cutMessage(c.Message), ObservedGeneration: gen,
	})
}

// cutMessage cuts a message the API server would refuse as too long.
func cutMessage(msg string) string {
	if len(msg) > MaxConditionMessage {
		return msg[:MaxConditionMessage-3] + "..."
	}
	return msg
}

// ConditionFields points at the fields of one condition of the reference
// system's shape, which the Liqo-compatible kinds (ResourceSlice,
// ForeignCluster, VirtualNode) keep instead of metav1.Condition: a type
// and a status of their own string types, no observed generation.
type ConditionFields[T, S ~string] struct {
	Type               *T
	Status             *S
	Reason, Message    *string
	LastTransitionTime *metav1.Time
}

// SetConditionOf is SetCondition for conditions of the reference system's
// shape, which fields opens: it sets the condition of type typ in conds
// to status, reason and message (appending it if missing). An overlong
// message is cut, and the transition time moves to now only when the
// status changes: setting the same outcome twice leaves conds identical,
// hence no write. It reports whether conds changed.
func SetConditionOf[C any, T, S ~string](conds *[]C, fields func(*C) ConditionFields[T, S], typ T, status S, reason, message string,
	now metav1.Time) bool {
	message = cutMessage(message)
	for i := range *conds {
		f := fields(&(*conds)[i])
		if *f.Type != typ {
			continue
		}
		if *f.Status == status && *f.Reason == reason && *f.Message == message {
			return false
		}
		if *f.Status != status {
			*f.LastTransitionTime = now
		}
		*f.Status, *f.Reason, *f.Message = status, reason, message
		return true
	}
	var c C
	f := fields(&c)
	*f.Type, *f.Status, *f.Reason, *f.Message, *f.LastTransitionTime = typ, status, reason, message, now
	*conds = append(*conds, c)
	return true
}

// IsTrue tells whether conds holds condition typ with status True.
func IsTrue(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(conds, typ)
}
