package teardown

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// DefaultTimeout leaves a consumer's pods their whole grace period (at most
// shadowpod.DefaultMaxGracePeriod, 5 minutes) and then as long again.
const DefaultTimeout = 10 * time.Minute

// Options bound the removal of a consumer's objects.
type Options struct {
	// Timeout is how long a consumer's object may be terminating before the
	// provider forces it out.
	Timeout time.Duration
}

// AddFlags binds the options to command-line flags.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Timeout, "teardown-timeout", o.Timeout,
		"how long a consumer's objects this cluster deletes as a provider (a drained Tenant's ShadowPods, an unpeered consumer's NamespaceMaps and twin namespaces) may take to go; "+
			"past it, the finalizers the provider did not put are removed and the pods left are deleted at once (keep it above --max-grace-period)")
}

// Validate reports a bad option in words a user can act on.
func (o *Options) Validate() error {
	if o.Timeout <= 0 {
		return fmt.Errorf("--teardown-timeout must be positive, got %s", o.Timeout)
	}
	return nil
}

func (o *Options) timeout() time.Duration {
	if o.Timeout > 0 {
		return o.Timeout
	}
	return DefaultTimeout
}
