// Package factory builds the clients liqoctl commands use, from the
// kubectl-compatible --kubeconfig/--context flags (and KUBECONFIG), and finds
// the Liqo components in a cluster.
package factory

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/apis"
	"github.com/liqo-go/liqo/pkg/consts"
)

// Cluster is the set of flags naming one cluster and the clients built from
// them.
type Cluster struct {
	// Role is "local" or "remote", used in messages.
	Role       string
	Kubeconfig string
	Context    string
	Namespace  string
	// RESTConfig, if set, is used instead of a kubeconfig: credentials
	// built in memory (liqoctl peer out-of-band).
	RESTConfig *rest.Config

	Config    *rest.Config
	Client    client.Client
	Clientset kubernetes.Interface
}

// AddLocalFlags binds the local cluster's flags, named as kubectl names them.
func (c *Cluster) AddLocalFlags(fs *pflag.FlagSet) {
	c.Role = "local"
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "path to the kubeconfig of the local cluster (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&c.Context, "context", "", "kubeconfig context of the local cluster")
	fs.StringVarP(&c.Namespace, "namespace", "n", consts.DefaultNamespace, "namespace where Liqo runs in the local cluster")
}

// AddRemoteFlags binds the remote cluster's flags.
func (c *Cluster) AddRemoteFlags(fs *pflag.FlagSet) {
	c.Role = "remote"
	fs.StringVar(&c.Kubeconfig, "remote-kubeconfig", "", "path to the kubeconfig of the remote cluster")
	fs.StringVar(&c.Context, "remote-context", "", "kubeconfig context of the remote cluster")
	fs.StringVar(&c.Namespace, "remote-namespace", consts.DefaultNamespace, "namespace where Liqo runs in the remote cluster")
}

// Connect loads the kubeconfig and checks that the API server answers
// within timeout, so an unreachable cluster fails in seconds with its
// address in the message instead of at the first real call.
func (c *Cluster) Connect(ctx context.Context, timeout time.Duration) error {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if c.Kubeconfig != "" {
		rules.ExplicitPath = c.Kubeconfig
	}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{CurrentContext: c.Context}).ClientConfig()
	if c.RESTConfig != nil {
		cfg, err = rest.CopyConfig(c.RESTConfig), nil
	}
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			flag := "--kubeconfig"
			if c.Role == "remote" {
				flag = "--remote-kubeconfig"
			}
			return fmt.Errorf("no kubeconfig for the %s cluster: pass %s FILE or set $KUBECONFIG (%s and the in-cluster configuration have none)",
				c.Role, flag, clientcmd.RecommendedHomeFile)
		}
		what := "the default kubeconfig"
		if c.Kubeconfig != "" {
			what = c.Kubeconfig
		}
		return fmt.Errorf("cannot load the %s cluster's kubeconfig (%s): %w", c.Role, what, err)
	}
	cfg.QPS, cfg.Burst = 50, 100
	c.Config = cfg
	if c.Clientset, err = kubernetes.NewForConfig(cfg); err != nil {
		return err
	}
	if c.Client, err = client.New(cfg, client.Options{Scheme: apis.NewScheme()}); err != nil {
		return err
	}
	probe := rest.CopyConfig(cfg)
	probe.Timeout = timeout
	dc, err := kubernetes.NewForConfig(probe)
	if err != nil {
		return err
	}
	done := make(chan error, 1)
	go func() { _, err := dc.Discovery().ServerVersion(); done <- err }()
	select {
	case err = <-done:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		return fmt.Errorf("the %s cluster's API server at %s is unreachable: %w", c.Role, cfg.Host, err)
	}
	return nil
}
