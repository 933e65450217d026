package gateway

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// Options are the manager's settings for the gateways it runs.
type Options struct {
	// Image is the gateway image (cmd/liqo-gateway).
	Image string
	// PullPolicy of the gateway pods.
	PullPolicy corev1.PullPolicy
}

// Validate tells what is wrong with o, if anything.
func (o Options) Validate() error {
	if o.Image == "" {
		return fmt.Errorf("the gateway image is not set")
	}
	switch o.PullPolicy {
	case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		return nil
	}
	return fmt.Errorf("invalid gateway image pull policy %q (Always, IfNotPresent or Never)", o.PullPolicy)
}
