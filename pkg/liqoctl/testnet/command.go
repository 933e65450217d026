// Package testnet implements liqoctl test network: it checks, with real
// traffic, that the pods of the local cluster and those it offloads to
// each provider reach one another, by address and through Services.
package testnet

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/liqo-go/liqo/pkg/liqoctl/compat"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// Namespace prefixes the namespace each run works in, offloaded to every
// provider: a run of its own gets a fresh one (liqo-test-network-xxxxx),
// so that it never waits for an earlier run's namespace to go, and two
// runs never share pods.
const Namespace = "liqo-test-network"

// Options of liqoctl test network.
type Options struct {
	Local    factory.Cluster
	Image    string
	Timeout  time.Duration
	Remove   bool
	FailFast bool
	// Basic runs only the checks by pod address from the local pod.
	Basic    bool
	Verbose  bool
	Attempts int
	// Info prints how the local cluster sees each provider's networks
	// before the checks.
	Info bool
	// RemoteKubeconfigs, if any, reach the providers to check: only
	// those are (default: every provider).
	RemoteKubeconfigs []string
	namespace         string
	// localNodes are the local nodes that run containers, where the local
	// test pods go.
	localNodes []string

	out *output.Printer
}

// NewCommand returns liqoctl test, with its network subcommand.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "test",
		Short: "Check a multi-cluster setup with real workloads",
		Long: `Check that a multi-cluster setup works end to end by running real workloads
on it and removing them afterwards. Today the check is the network's.`,
		Example: `  liqoctl test network
  liqoctl test network --basic --rm`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newNetworkCommand())
	return cmd
}

func newNetworkCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "network",
		Short: "Check pod-to-pod and Service connectivity between the local cluster and its providers",
		Long: `Check the network fabric with real traffic.

The command offloads a namespace of its own (` + Namespace + `-xxxxx) to every provider, runs a small
web server on a local node and one on each virtual node, each behind a
Service of its own, and a client on a local node's own network (a
host-network pod, as the node's processes send). The local pods go to nodes
that run containers: never a virtual node, nor a node simulated by kwok. The local server fetches
every remote one by the pod address the local cluster shows and by Service
name; the local node fetches every remote one by pod address (its traffic
enters the tunnel behind the gateway's address); every remote server
fetches the local one by Service name, in its own cluster's view (the
network fabric joins each provider to the consumer, not providers to one
another). With --basic only the local pod's checks by pod address run.
It prints a table of the checks (FROM, TO, and each way: OK, FAILED, or -
when not checked) and fails naming the checks that failed.

Only the local cluster's kubeconfig is needed: the remote pods are reached
through their virtual nodes. With --remote-kubeconfigs (-p) only the
providers those kubeconfigs reach are checked (each must be one); with
--info the command first prints how the local cluster sees each provider's
networks (its pod and external CIDRs, remapped where they overlap local
ones) and the state of the tunnel to it.

The checks of NodePorts, LoadBalancers and remapped external IPs the
reference runs (--pod-np, --np-ext, --lb, --ip) are not implemented: those
flags are refused rather than passing without checking anything.`,
		Example: `  liqoctl test network
  liqoctl test network --basic
  liqoctl test network --kubeconfig ~/.kube/rome --rm=false
  liqoctl test network --info -p ~/.kube/milan -p ~/.kube/florence`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.out = &output.Printer{W: cmd.OutOrStdout(), Verbose: o.Verbose}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			return o.Run(ctx)
		},
	}
	fs := cmd.Flags()
	o.Local.AddLocalFlags(fs)
	fs.StringVar(&o.Image, "image", "busybox", "image of the test pods: it must have sh, httpd, wget and timeout (busybox has)")
	fs.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "give up after this long")
	fs.BoolVar(&o.Remove, "rm", true, "remove the test namespace at the end (its remote twins go with it)")
	fs.BoolVar(&o.FailFast, "fail-fast", false, "stop at the first failed check")
	fs.BoolVar(&o.Basic, "basic", false, "only check pod to pod by address, from the local pod (no Services, no node)")
	fs.IntVar(&o.Attempts, "attempts", 5, "tries of each check before it counts as failed (a Service's rules reach the nodes a moment after its pods)")
	fs.BoolVarP(&o.Verbose, "verbose", "v", false, "print how long each step took")
	fs.BoolVar(&o.Info, "info", false, "first print how the local cluster sees each provider's networks and the state of the tunnel to it")
	fs.StringSliceVarP(&o.RemoteKubeconfigs, "remote-kubeconfigs", "p", nil, "kubeconfigs of the providers to check (repeatable or comma-separated; default: every provider)")
	const notChecked = "this test checks pod to pod by address and by Service name only; there is no NodePort, LoadBalancer or external-IP check here: " +
		"test those with a client of your own"
	for _, name := range []string{"ip", "lb", "np-ext", "pod-np"} {
		fs.Bool(name, false, "")
		compat.Refuse(fs, name, notChecked)
	}
	fs.String("np-nodes", "all", "")
	compat.Ignore(fs, "np-nodes", "it chooses the nodes of the NodePort checks, which do not exist here (--pod-np and --np-ext are refused)")
	return cmd
}
