package kit

import (
	"regexp"

	"k8s.io/apimachinery/pkg/api/equality"
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
	msg := c.Message
	if len(msg) > MaxConditionMessage {
		msg = msg[:MaxConditionMessage-3] + "..."
	}
	return meta.SetStatusCondition(conds, metav1.Condition{
		Type: c.Type, Status: status, Reason: reason, Message: msg, ObservedGeneration: gen,
	})
}

// SetTypedCondition is SetCondition for the APIs, kept compatible with the
// reference system's, whose conditions are a type of their own rather than
// metav1.Condition (VirtualNode's, whose statuses are None, Running,
// Creating...). want replaces the condition of its type in conds, or is
// appended; fields reaches a condition's type, status and transition time,
// which moves to now only when the status changes. It reports whether conds
// changed.
func SetTypedCondition[C any, T, S comparable](conds *[]C, want C, fields func(*C) (typ T, status S, since *metav1.Time)) bool {
	typ, status, since := fields(&want)
	for i := range *conds {
		c := &(*conds)[i]
		ct, cs, csince := fields(c)
		if ct != typ {
			continue
		}
		*since = *csince
		if cs != status {
			*since = metav1.Now()
		}
		if equality.Semantic.DeepEqual(*c, want) {
			return false
		}
		*c = want
		return true
	}
	*since = metav1.Now()
	*conds = append(*conds, want)
	return true
}

// IsTrue tells whether conds holds condition typ with status True.
func IsTrue(conds []metav1.Condition, typ string) bool {
	return meta.IsStatusConditionTrue(conds, typ)
}
