package webhooktest

import (
	"strings"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
)

// WantRefused fails unless resp refuses the request with a message
// containing every fragment.
func WantRefused(t *testing.T, what string, resp admission.Response, fragments ...string) {
	t.Helper()
	msg := ""
	if resp.Result != nil {
		msg = resp.Result.Message
	}
	if resp.Allowed {
		t.Errorf("%s: admitted, want a refusal containing %q", what, fragments)
		return
	}
	for _, f := range fragments {
		if !strings.Contains(msg, f) {
			t.Errorf("%s: refused with %q, want it to contain %q", what, msg, f)
		}
	}
}
