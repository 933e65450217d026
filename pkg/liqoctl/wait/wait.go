package peer

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// pollInterval is short: peering is interactive and each wait is for one
// controller's reaction, usually a few milliseconds away.
const pollInterval = 50 * time.Millisecond

// errNotYet tells waitFor to keep waiting.
var errNotYet = errors.New("not yet")

// waitFor gets obj until check accepts it, returns check's error if it is a
// final one, or says what it was waiting for when ctx ends.
func waitFor[T client.Object](ctx context.Context, c client.Client, key client.ObjectKey, obj T, what string, check func(T) error) error {
	last := errNotYet
	for {
		err := c.Get(ctx, key, obj)
		switch {
		case err == nil:
			last = check(obj)
			if last == nil {
				return nil
			}
			if !errors.Is(last, errNotYet) {
				return last
			}
		case apierrors.IsNotFound(err):
			last = fmt.Errorf("%w: %s does not exist", errNotYet, key)
		case ctx.Err() == nil:
			last = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out waiting for %s (%v)", what, last)
		case <-time.After(pollInterval):
		}
	}
}

// notYet wraps a progress description as a non-final error.
func notYet(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errNotYet}, args...)...)
}
