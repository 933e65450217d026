package kit

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
)

// ValidateImage checks the image and pull policy of a component the
// manager runs (what names it, for the message).
func ValidateImage(what, image string, policy corev1.PullPolicy) error {
	if image == "" {
		return fmt.Errorf("the %s image is not set", what)
	}
	switch policy {
	case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		return nil
	}
	return fmt.Errorf("invalid %s image pull policy %q (Always, IfNotPresent or Never)", what, policy)
}
