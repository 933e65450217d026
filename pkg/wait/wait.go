// Package wait holds the polling used to wait for a controller's reaction,
// on apimachinery's wait: by liqoctl's commands, and by the steps of
// peering (pkg/peering) that liqoctl and the controller manager share.
package wait

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// PollInterval is short: peering is interactive and each wait is for one
// controller's reaction, usually a few milliseconds away.
const PollInterval = 50 * time.Millisecond

// errNotYet tells For to keep waiting.
var errNotYet = errors.New("not yet")

// For gets obj until check accepts it, returns check's error if it is a
// final one, or says what it was waiting for when ctx ends.
func For[T client.Object](ctx context.Context, c client.Client, key client.ObjectKey, obj T, what string, check func(T) error) error {
	last := errNotYet
	err := wait.PollUntilContextCancel(ctx, PollInterval, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, key, obj)
		switch {
		case err == nil:
			last = check(obj)
			if last == nil {
				return true, nil
			}
			if !errors.Is(last, errNotYet) {
				return false, last
			}
		case apierrors.IsNotFound(err):
			last = fmt.Errorf("%w: %s does not exist", errNotYet, key)
		case ctx.Err() == nil:
			last = err
		}
		return false, nil
	})
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("timed out waiting for %s (%v)", what, last)
	}
	return err
}

// Gone waits until the object at key no longer exists (obj receives it
// meanwhile), or says what it was waiting for when ctx ends.
func Gone(ctx context.Context, c client.Client, key client.ObjectKey, obj client.Object, what string) error {
	err := wait.PollUntilContextCancel(ctx, PollInterval, true, func(ctx context.Context) (bool, error) {
		return apierrors.IsNotFound(c.Get(ctx, key, obj)), nil
	})
	if err != nil {
		return fmt.Errorf("timed out waiting for %s to be deleted", what)
	}
	return nil
}

// NotYet wraps a progress description as a non-final error.
func NotYet(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errNotYet}, args...)...)
}
