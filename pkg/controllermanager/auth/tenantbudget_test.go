package auth

import (
	"strings"
	"testing"

	"github.com/liqo-go/liqo/pkg/webhook/budget"
)

// TestBudgetStatus: the amounts as the Tenant shows them, and the
// pressure condition from 90% of either amount, exhausted at either
// limit.
func TestBudgetStatus(t *testing.T) {
	const mi = 1 << 20
	for _, tc := range []struct {
		name    string
		u       budget.Usage
		ok      bool
		reason  string
		message string
	}{
		{"empty", budget.Usage{MaxBytes: 128 * mi, MaxObjects: 10000}, false, ReasonWithinBudget, "0 of 10000 objects, 0 of 128Mi"},
		{"half", budget.Usage{Bytes: 64 * mi, Objects: 5000, MaxBytes: 128 * mi, MaxObjects: 10000}, false, ReasonWithinBudget, "5000 of 10000 objects"},
		{"bytes near", budget.Usage{Bytes: 116 * mi, Objects: 10, MaxBytes: 128 * mi, MaxObjects: 10000}, true, ReasonObjectBudgetNear, "116Mi of 128Mi"},
		{"objects near", budget.Usage{Bytes: 1, Objects: 9000, MaxBytes: 128 * mi, MaxObjects: 10000}, true, ReasonObjectBudgetNear, "9000 of 10000"},
		{"just under near", budget.Usage{Bytes: 1, Objects: 8999, MaxBytes: 128 * mi, MaxObjects: 10000}, false, ReasonWithinBudget, "8999 of 10000"},
		{"objects reached", budget.Usage{Bytes: 1, Objects: 10000, MaxBytes: 128 * mi, MaxObjects: 10000}, true, ReasonObjectBudgetReached, "--max-tenant-objects"},
		{"bytes over (budget lowered)", budget.Usage{Bytes: 200 * mi, Objects: 3, MaxBytes: 128 * mi, MaxObjects: 10000}, true, ReasonObjectBudgetReached, "200Mi of 128Mi"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := BudgetStatus(tc.u)
			if s.UsedBytes.Value() != tc.u.Bytes || s.MaxBytes.Value() != tc.u.MaxBytes || s.UsedObjects != tc.u.Objects || s.MaxObjects != tc.u.MaxObjects {
				t.Errorf("status %+v does not carry %+v", s, tc.u)
			}
			if c.OK != tc.ok || c.Reason != tc.reason || !strings.Contains(c.Message, tc.message) {
				t.Errorf("condition %+v, want OK %v, reason %s, a message with %q", c, tc.ok, tc.reason, tc.message)
			}
		})
	}
}
