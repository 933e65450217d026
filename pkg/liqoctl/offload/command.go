// Package offload implements liqoctl offload namespace and liqoctl unoffload
// namespace: they create and delete a namespace's NamespaceOffloading and
// wait for the controller manager to extend the namespace to the remote
// clusters, or to withdraw it.
package offload

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/liqoctl/completion"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/liqoctl/volumes"
)

// Options of liqoctl offload namespace.
type Options struct {
	Local                    factory.Cluster
	Namespace                string
	NamespaceMappingStrategy string
	RemoteNamespaceName      string
	PodOffloadingStrategy    string
	Selectors                []string
	// NsSelector, instead of Namespace, selects the namespaces to offload
	// by their labels.
	NsSelector string
	// Print, when it asks for a format (-o), prints the NamespaceOffloading
	// instead of applying it.
	Print   *output.Flags
	Timeout time.Duration

	out *output.Printer
}

// NewCommand returns liqoctl offload, with its namespace subcommand.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "offload",
		Short: "Offload a resource to remote clusters",
		Long: `Offload a resource of the local cluster to the peered clusters. Today the
resource is a namespace: its pods may then run on the virtual nodes that
stand for the providers, in twin namespaces there.`,
		Example: `  liqoctl offload namespace liqo-demo
  liqoctl offload namespace liqo-demo --pod-offloading-strategy Remote`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newNamespaceCommand())
	return cmd
}

func newNamespaceCommand() *cobra.Command {
	o := &Options{}
	cmd := &cobra.Command{
		Use:     "namespace [NAME]",
		Aliases: []string{"ns"},
		Short:   "Offload a namespace to remote clusters",
		Long: `Offload a namespace to the peered (remote) clusters: twin namespaces are
created in the selected clusters, and the pods of the namespace may run there
as the pod offloading strategy allows.

The command creates the namespace's NamespaceOffloading and waits until the
twin namespaces exist (phase Ready); it fails with each cluster's reason if
some cannot be created or no cluster is selected. Run again with another
--pod-offloading-strategy or --selector, it updates them in place (new pods
follow; running pods stay where they are; a cluster no longer selected loses
its twin namespace); the namespace mapping strategy cannot change: unoffload
the namespace and offload it again.

--selector takes a label selector over the labels of the virtual nodes
(the clusters' labels); repeat it for alternatives: requirements inside one
--selector are ANDed, separate --selector flags are ORed. With none, every
peered cluster is selected.

With --ns-selector instead of NAME, every namespace whose labels the
selector matches is offloaded with the same flags (Liqo's own namespaces
are never selected); the command goes through all of them and fails, naming
them, if some fail.

With --output (yaml, json, or kubectl's other formats) the
NamespaceOffloading is printed and nothing is applied, e.g. for GitOps.`,
		Example: `  liqoctl offload namespace liqo-demo
  liqoctl offload namespace liqo-demo --namespace-mapping-strategy EnforceSameName \
      --pod-offloading-strategy LocalAndRemote --selector 'topology.liqo.io/region=south'
  liqoctl offload namespace liqo-demo --selector 'region in (europe,us-west), !staging'
  liqoctl offload namespace liqo-demo --selector 'region in (europe,us-west)' --selector '!staging'
  liqoctl offload namespace --ns-selector team=shop --pod-offloading-strategy Remote
  liqoctl offload namespace foo --output yaml`,
		Args:              namespaceArgs(&o.NsSelector),
		ValidArgsFunction: completion.Namespace,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.out = &output.Printer{W: cmd.OutOrStdout()}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			if len(args) == 1 {
				o.Namespace = args[0]
				return o.Run(ctx)
			}
			progress := o.out
			if o.Print.Requested() {
				// stdout holds the manifests alone.
				progress = &output.Printer{W: cmd.ErrOrStderr()}
			}
			first := true
			return forEachSelected(ctx, &o.Local, o.Timeout, o.NsSelector, progress, func(ns string) error {
				if o.Print.Requested() && !first {
					if err := o.Print.PrintSeparator(o.out.W); err != nil {
						return err
					}
				}
				first = false
				o.Namespace = ns
				return o.Run(ctx)
			})
		},
	}
	fs := cmd.Flags()
	o.Local.AddLocalFlags(fs)
	fs.StringVar(&o.NamespaceMappingStrategy, "namespace-mapping-strategy", string(offv1beta1.DefaultNameMappingStrategy),
		"how the twin namespaces are named: DefaultName (<namespace>-<local cluster id>), EnforceSameName or SelectedName")
	fs.StringVar(&o.RemoteNamespaceName, "remote-namespace-name", "", "name of the twin namespaces, with --namespace-mapping-strategy SelectedName")
	fs.StringVar(&o.PodOffloadingStrategy, "pod-offloading-strategy", string(offv1beta1.LocalAndRemotePodOffloadingStrategy),
		"where the namespace's pods may run: LocalAndRemote, Local or Remote")
	fs.StringArrayVarP(&o.Selectors, "selector", "l", nil, "label selector over the virtual nodes' labels choosing the clusters (repeatable: ORed)")
	fs.StringVar(&o.NsSelector, NsSelectorFlag, "", "instead of NAME, a label selector over the namespaces' labels: offload every namespace it matches")
	o.Print = output.NewObjectFlags("")
	o.Print.AddFlags(cmd, "print the NamespaceOffloading instead of applying it")
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "give up waiting after this long")
	return cmd
}

// UnoffloadOptions of liqoctl unoffload namespace.
type UnoffloadOptions struct {
	Local     factory.Cluster
	Namespace string
	// NsSelector, instead of Namespace, selects the namespaces to
	// unoffload by their labels.
	NsSelector string
	Timeout    time.Duration
	// DeleteRemoteVolumes lets the unoffloading delete the volumes the
	// storage fabric keeps in the twins.
	DeleteRemoteVolumes bool

	out *output.Printer
}

// NewUnoffloadCommand returns liqoctl unoffload, with its namespace
// subcommand.
func NewUnoffloadCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "unoffload",
		Short: "Unoffload a resource from remote clusters",
		Long: `Stop offloading a resource of the local cluster, undoing liqoctl offload.
Today the resource is a namespace: its twin namespaces on the providers are
deleted.`,
		Example: `  liqoctl unoffload namespace liqo-demo`,
		Args:    cobra.NoArgs,
	}
	o := &UnoffloadOptions{}
	ns := &cobra.Command{
		Use:     "namespace [NAME]",
		Aliases: []string{"ns"},
		Short:   "Unoffload a namespace from remote clusters",
		Long: `Stop offloading a namespace: its twin namespaces are deleted in the remote
clusters, with everything in them, and the pods that ran remotely are
rescheduled locally. This is destructive for whatever was created in the
twin namespaces: while PVCs of the namespace have their volumes on a
provider (the liqo StorageClass), the command refuses, naming them, unless
--delete-remote-volumes is given.

The command deletes the namespace's NamespaceOffloading and waits until the
controller manager confirms the twins are gone (a cluster that cannot be
reached is not waited for: it removes its twin when it can be reached again).

With --ns-selector instead of NAME, every namespace whose labels the
selector matches is unoffloaded (those not offloaded are left as they are);
the command goes through all of them and fails, naming them, if some fail.`,
		Example: `  liqoctl unoffload namespace liqo-demo
  liqoctl unoffload namespace --ns-selector team=shop`,
		Args:              namespaceArgs(&o.NsSelector),
		ValidArgsFunction: completion.OffloadedNamespace,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.out = &output.Printer{W: cmd.OutOrStdout()}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			if len(args) == 1 {
				o.Namespace = args[0]
				return o.Run(ctx)
			}
			return forEachSelected(ctx, &o.Local, o.Timeout, o.NsSelector, o.out, func(ns string) error {
				o.Namespace = ns
				return o.Run(ctx)
			})
		},
	}
	fs := ns.Flags()
	o.Local.AddLocalFlags(fs)
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "give up waiting after this long")
	fs.StringVar(&o.NsSelector, NsSelectorFlag, "", "instead of NAME, a label selector over the namespaces' labels: unoffload every namespace it matches")
	fs.BoolVar(&o.DeleteRemoteVolumes, volumes.Flag, false, "unoffload even though PVCs of the namespace have their volumes on providers, deleting their data")
	cmd.AddCommand(ns)
	return cmd
}
