package peer

import (
	"github.com/spf13/pflag"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
)

// proxyURLFlag is --proxy-url: the proxy through which the consumer's
// components reach the provider's API server. It is checked as it is
// parsed, so a bad URL is a usage error naming the flag (exit 2) before
// anything is changed on either cluster.
type proxyURLFlag struct{ url *string }

func (f proxyURLFlag) String() string { return *f.url }
func (f proxyURLFlag) Type() string   { return "url" }

func (f proxyURLFlag) Set(s string) error {
	if s != "" {
		if err := authv1beta1.ValidateProxyURL(s); err != nil {
			return err
		}
	}
	*f.url = s
	return nil
}

// addProxyURLFlag binds --proxy-url to url. liqoctl itself reaches the
// provider as its kubeconfig says (which may name a proxy-url too, as for
// kubectl): the proxy the consumer's components use may be reachable only
// from the consumer's cluster, e.g. by a Service name.
func addProxyURLFlag(fs *pflag.FlagSet, url *string) {
	fs.Var(proxyURLFlag{url}, "proxy-url",
		"proxy (http, https or socks5 URL) through which the consumer's components reach the provider's API server; it goes into the Tenant and the consumer's Identity")
}
