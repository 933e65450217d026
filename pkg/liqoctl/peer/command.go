// Package peer implements liqoctl peer and unpeer: the consumer (local
// cluster) peers with a provider (remote cluster), with an admin kubeconfig
// for each.
package peer

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/network"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// Options of liqoctl peer.
type Options struct {
	Local, Remote      factory.Cluster
	NetworkingDisabled bool
	// InBand gives the consumer the provider's API server at its address
	// in the network fabric (peer in-band, --in-band).
	InBand bool
	// Network holds the network fabric's flags (those of network connect).
	Network network.Options
	// ResourceFlags are the resources asked for.
	ResourceFlags
	// CreateResourceSlice and CreateVirtualNode, when false, stop the
	// peering after the authentication, or after the provider granted the
	// resources.
	CreateResourceSlice, CreateVirtualNode bool
	// ResourceSliceClass is the class of the ResourceSlice asked for,
	// which selects the provider's policy.
	ResourceSliceClass string
	// ProxyURL is the proxy through which the consumer's components reach
	// the provider's API server (--proxy-url), if any.
	ProxyURL string
	Timeout  time.Duration
	Verbose  bool
	// Name, when set (liqoctl peer NAME), is the remote cluster's ID, which
	// the remote cluster reached must have.
	Name string

	out *output.Printer
}

// NewCommand returns liqoctl peer.
func NewCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:   "peer [NAME]",
		Short: "Peer the local cluster (consumer) with a remote cluster (provider)",
		Long: `Peer the local cluster, the consumer, with a remote cluster, the provider,
so that the provider appears here as a virtual node.

The command needs admin access to both clusters. Unless
--networking-disabled is given, it first connects the clusters' networks as
"liqoctl network connect" does (the gateway server on the provider). It
ensures the tenant namespaces on both sides, proves this cluster's identity to the provider
with a signed nonce, obtains a client certificate for this cluster from the
provider's certificates API, asks for resources with a ResourceSlice and
waits until the virtual node is Ready. It is idempotent: running it again
repairs a partial peering and changes nothing on a complete one.

Each stage is also a command of its own, for administrators who automate
or debug one at a time: liqoctl authenticate (or, with access to one
cluster at a time, create nonce, generate tenant and generate identity),
liqoctl create resourceslice and liqoctl create virtualnode.
--create-resource-slice=false stops once the clusters are authenticated,
--create-virtual-node=false once the provider granted the resources.

--proxy-url has this cluster's components (the controller manager, the
virtual kubelets) reach the provider's API server through an http, https
or socks5 proxy: it goes into the kubeconfig this cluster stores for the
provider. liqoctl itself connects as --remote-kubeconfig says.

NAME, as in the v0.5 manual's "liqoctl --context=provider peer consumer",
names the remote cluster by its cluster ID: without a --remote- flag, it is
reached through the context of that name in the kubeconfig. When that
cluster already consumes this one in band (liqoctl peer in-band), this
peering goes in band too.`,
		Example: `  liqoctl peer --remote-kubeconfig ~/.kube/milan
  liqoctl peer --context rome --remote-context milan
  liqoctl --context=provider peer consumer
  liqoctl peer --remote-kubeconfig /path/to/aws-kubeconfig \
      --namespace liqo --remote-namespace liqo-system --networking-disabled
  liqoctl peer --remote-kubeconfig ~/.kube/milan --cpu=8 --memory=16Gi --pods=50
  liqoctl peer --remote-kubeconfig ~/.kube/milan --create-virtual-node=false
  liqoctl peer --remote-kubeconfig ~/.kube/milan --proxy-url http://proxy.rome.example:3128`,
		Args: remoteOrName,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Name = args[0]
				ok, err := remoteByName(cmd, &o.Local, &o.Remote, o.Name)
				if err != nil {
					return err
				}
				if !ok {
					return fmt.Errorf("peer %s: the kubeconfig has no context %q to reach cluster %s: pass --remote-kubeconfig or --remote-context, or run liqoctl generate peer-command on %s and the command it prints here",
						o.Name, o.Name, o.Name, o.Name)
				}
			}
			o.out = &output.Printer{W: cmd.OutOrStdout(), Verbose: o.Verbose}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			return o.Run(ctx)
		},
	}
	o.Remote.AddRemoteFlags(cmd.Flags(), &o.Local)
	o.addFlags(cmd)
	cmd.AddCommand(newOutOfBandCommand(), newInBandCommand())
	return cmd
}

// addFlags binds the flags peer and peer out-of-band share: the local
// cluster's, the network's, the resources'.
func (o *Options) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.Local.AddLocalFlags(fs)
	fs.BoolVar(&o.NetworkingDisabled, "networking-disabled", false, "do not set up the network fabric between the clusters (offloaded pods run, but no packet crosses)")
	fs.BoolVar(&o.InBand, "in-band", false, "reach the provider's API server through the network fabric's tunnel, as liqoctl peer in-band does")
	addProxyURLFlag(fs, &o.ProxyURL)
	o.Network.AddConnectFlags(fs)
	o.bind(fs, "ask the provider for")
	fs.BoolVar(&o.CreateResourceSlice, "create-resource-slice", true, "ask the provider for resources; false stops once authenticated (as liqoctl authenticate)")
	fs.BoolVar(&o.CreateVirtualNode, "create-virtual-node", true, "make the virtual node of the granted resources; false stops once the provider granted them")
	fs.StringVar(&o.ResourceSliceClass, "resource-slice-class", string(authv1beta1.DefaultResourceSliceClass), "class of the ResourceSlice asked for, which selects the provider's policy")
	network.AddSkipValidationFlag(fs)
	// The reference's default: a peering with the network fabric may wait
	// for a cloud load balancer (and fall back to a NodePort after that).
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "give up after this long")
	fs.BoolVarP(&o.Verbose, "verbose", "v", false, "print how long each step took")
}

// ResourceFlags are the --cpu, --memory, --pods and --resource flags.
type ResourceFlags struct {
	CPU, Memory, Pods string
	// Resources maps each --resource name to its quantity.
	Resources map[string]string
}

// bind binds the flags, each described as what to do with it; they
// default to what a slice naming nothing asks for.
func (r *ResourceFlags) bind(fs *pflag.FlagSet, what string) {
	def := authv1beta1.DefaultResources()
	fs.StringVar(&r.CPU, "cpu", quantity(def, corev1.ResourceCPU), "CPU to "+what)
	fs.StringVar(&r.Memory, "memory", quantity(def, corev1.ResourceMemory), "memory to "+what)
	fs.StringVar(&r.Pods, "pods", quantity(def, corev1.ResourcePods), "number of pods to "+what)
	// pflag's map flag: name=quantity pairs, repeated or comma-separated;
	// a pair without "=" is a usage error naming the flag. The back-quoted
	// name=quantity is what help shows for its value, in place of the type
	// "stringToString"; an empty DefValue keeps help from printing
	// "(default [])" for the empty map.
	// Ephemeral storage has a default but no flag of its own (the
	// reference's peer has none): the provider grants its default to a
	// slice not naming it, so help says how to ask for another amount.
	disk := def[corev1.ResourceEphemeralStorage]
	fs.StringToStringVar(&r.Resources, "resource", nil, "other resource to "+what+", as `name=quantity` (repeatable), e.g. nvidia.com/gpu=1; "+
		"ephemeral-storage is "+disk.String()+" unless given")
	fs.Lookup("resource").DefValue = ""
}

func quantity(l corev1.ResourceList, name corev1.ResourceName) string {
	q := l[name]
	return q.String()
}

// requested parses the resource flags.
func (r *ResourceFlags) requested() (corev1.ResourceList, error) {
	out := corev1.ResourceList{}
	add := func(flag, name, value string) error {
		q, err := resource.ParseQuantity(value)
		if err != nil {
			return fmt.Errorf("%s: %q is not a quantity: %w", flag, value, err)
		}
		if q.Sign() < 0 {
			return fmt.Errorf("%s: %q is negative", flag, value)
		}
		out[corev1.ResourceName(name)] = q
		return nil
	}
	for _, f := range []struct{ flag, name, value string }{
		{"--cpu", "cpu", r.CPU}, {"--memory", "memory", r.Memory}, {"--pods", "pods", r.Pods},
	} {
		if err := add(f.flag, f.name, f.value); err != nil {
			return nil, err
		}
	}
	// Sorted, so that of several bad ones the same is reported each time.
	names := make([]string, 0, len(r.Resources))
	for name := range r.Resources {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		value := r.Resources[name]
		if name == "" {
			return nil, fmt.Errorf("--resource %q is not of the form name=quantity", "="+value)
		}
		if err := add("--resource "+name, name, value); err != nil {
			return nil, err
		}
	}
	return out, nil
}
