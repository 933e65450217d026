package harness

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Eventually polls cond every 100 ms until it holds, and fails the test if
// ctx ends first, with the last error cond returned. Tests poll; the
// controllers under test never do.
func Eventually(ctx context.Context, t testing.TB, what string, cond func() (bool, error)) {
	t.Helper()
	var last error
	err := wait.PollUntilContextCancel(ctx, 100*time.Millisecond, true, func(context.Context) (bool, error) {
		ok, err := cond()
		last = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v (last error: %v)", what, err, last)
	}
}
