package webhook

import (
	"crypto/x509"
	"fmt"
	"os"
	"time"

	"github.com/spf13/pflag"
)

// DefaultCertLifetime is how long a serving certificate and its CA are
// valid. Each is renewed at two thirds of it, and every renewal rewrites the
// webhook configurations' caBundle, so a shorter lifetime means more
// writes; a longer one, a stolen key useful for longer.
const DefaultCertLifetime = 30 * 24 * time.Hour

// minCertLifetime leaves a renewal, its publication and the switch to the
// new certificate time to happen before the old one expires.
const minCertLifetime = 10 * time.Second

// DefaultCheckInterval is how often every replica checks that the webhook
// configurations name a server that answers: the longest a lost replica
// can leave pod creations in offloaded namespaces failing, give or take a
// probe's timeout.
const DefaultCheckInterval = 10 * time.Second

// ServingOptions configure how the webhook server is reached: who may call
// it, how long its certificates live, how often its registration is
// checked.
type ServingOptions struct {
	// ClientCAFile names a PEM file of the CAs that sign the client
	// certificate the API server presents to webhooks (its
	// AdmissionConfiguration's kubeConfigFile). Empty: the server asks for
	// no client certificate and anyone reaching its port may send it
	// admission reviews.
	ClientCAFile string
	// ClientNames, if set, are the only common names accepted in a client
	// certificate: needed when ClientCAFile is a CA that signs other
	// clients too (the cluster's CA signs every user's certificate).
	ClientNames []string
	// CertLifetime is the validity of each serving certificate and of the
	// CA that signs it; DefaultCertLifetime if zero.
	CertLifetime time.Duration
	// CheckInterval is how often the registration is checked;
	// DefaultCheckInterval if zero.
	CheckInterval time.Duration
}

// DefaultServingOptions are the defaults the flags start from.
func DefaultServingOptions() ServingOptions {
	return ServingOptions{CertLifetime: DefaultCertLifetime, CheckInterval: DefaultCheckInterval}
}

// AddFlags adds the options' flags to fs.
func (o *ServingOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.ClientCAFile, "webhook-client-ca", o.ClientCAFile, "PEM file of the CAs signing the client certificate the API server presents to admission webhooks "+
		"(kube-apiserver --admission-control-config-file, kubeConfigFile); when set, the webhook server refuses callers without one. "+
		"Empty: the webhook server authenticates no caller, and whoever reaches its port can send it admission reviews")
	fs.StringSliceVar(&o.ClientNames, "webhook-client-names", o.ClientNames, "common names accepted in the API server's client certificate "+
		"(default: any the --webhook-client-ca signs); set it when that CA signs other clients' certificates too")
	fs.DurationVar(&o.CertLifetime, "webhook-cert-lifetime", o.CertLifetime, "validity of the webhook server's certificate and CA, made at start and renewed at two thirds of it")
	fs.DurationVar(&o.CheckInterval, "webhook-registration-check-interval", o.CheckInterval, "how often every replica checks that the registered webhook server answers, and registers itself if not")
}

// Validate reports the first bad setting in words a user can act on.
func (o *ServingOptions) Validate() error {
	if o.CertLifetime != 0 && o.CertLifetime < minCertLifetime {
		return fmt.Errorf("--webhook-cert-lifetime must be at least %s, got %s", minCertLifetime, o.CertLifetime)
	}
	if o.CheckInterval < 0 {
		return fmt.Errorf("--webhook-registration-check-interval must be positive, got %s", o.CheckInterval)
	}
	if len(o.ClientNames) > 0 && o.ClientCAFile == "" {
		return fmt.Errorf("--webhook-client-names needs --webhook-client-ca: without a CA no client certificate is asked for")
	}
	for _, n := range o.ClientNames {
		if n == "" {
			return fmt.Errorf("--webhook-client-names: empty name")
		}
	}
	if o.ClientCAFile != "" {
		if _, err := o.clientCAs(); err != nil {
			return err
		}
	}
	return nil
}

// clientCAs reads ClientCAFile.
func (o *ServingOptions) clientCAs() (*x509.CertPool, error) {
	data, err := os.ReadFile(o.ClientCAFile)
	if err != nil {
		return nil, fmt.Errorf("--webhook-client-ca: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("--webhook-client-ca: %s holds no PEM certificate", o.ClientCAFile)
	}
	return pool, nil
}

func (o ServingOptions) lifetime() time.Duration {
	if o.CertLifetime > 0 {
		return o.CertLifetime
	}
	return DefaultCertLifetime
}

func (o ServingOptions) interval() time.Duration {
	if o.CheckInterval > 0 {
		return o.CheckInterval
	}
	return DefaultCheckInterval
}
