// Package export implements liqoctl export service and liqoctl unexport
// service: they create and delete the ServiceExport
// (multicluster.x-k8s.io/v1beta1) that shares a Service with the
// clusterset, and report what Liqo's controller manager made of it.
package export

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/liqo-go/liqo/pkg/liqoctl/completion"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// Options of liqoctl export service.
type Options struct {
	Local factory.Cluster
	// Name and Namespace are the Service's, and its ServiceExport's.
	Name, Namespace string
	// Print, when it asks for a format (-o), prints the ServiceExport
	// instead of creating it.
	Print   *output.Flags
	Timeout time.Duration

	out *output.Printer
}

// UnexportOptions of liqoctl unexport service.
type UnexportOptions struct {
	Local           factory.Cluster
	Name, Namespace string
	Timeout         time.Duration

	out *output.Printer
}

// NewCommand returns liqoctl export, with its service subcommand.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Export a resource to the clusterset",
		Long: `Share a resource of the local cluster with the clusters it is peered with (its
clusterset). The resource is a Service, exported with the Multi-Cluster
Services API: every cluster of the clusterset imports it, backed by the
endpoints of each cluster that exports it.`,
		Example: `  liqoctl export service hello -n demo`,
		Args:    cobra.NoArgs,
	}
	o := &Options{}
	svc := &cobra.Command{
		Use:     "service NAME",
		Aliases: []string{"svc"},
		Short:   "Export a Service to the clusterset",
		Long: `Export a Service to the clusterset: the command creates the ServiceExport of
the Service (same name, same namespace) and waits until Liqo's controller
manager has judged it, then prints its Valid condition, and its Conflict
condition when the clusters exporting the Service disagree on it (ports,
type, ...: the oldest export wins; the export still takes part).

Nothing is created when the Service does not exist or is of type
ExternalName (it has no endpoints to share): the command fails and says
so. It fails too when the cluster lacks the Multi-Cluster Services CRDs,
which Liqo's chart installs. A Service already exported is left as it is,
and the command reports its conditions (exit status 0).

The wait lasts up to --timeout; past it the ServiceExport stays in place
and the error gives its last state (liqoctl unexport service removes it).

With --output (yaml, json, or kubectl's other formats) the ServiceExport
is printed and nothing is applied, e.g. for GitOps.`,
		Example: `  liqoctl export service hello -n demo
  liqoctl export service hello --namespace demo --timeout 1m
  liqoctl export service hello -n demo -o yaml`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completion.Service,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			o.out = &output.Printer{W: cmd.OutOrStdout()}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			return o.Run(ctx)
		},
	}
	fs := svc.Flags()
	// -n is the Service's namespace here, as kubectl's, not Liqo's.
	o.Local.AddLocalConnectionFlags(fs)
	fs.StringVarP(&o.Namespace, "namespace", "n", "default", "namespace of the Service")
	o.Print = output.NewObjectFlags("")
	o.Print.AddFlags(svc, "print the ServiceExport instead of creating it")
	fs.DurationVar(&o.Timeout, "timeout", 30*time.Second, "give up waiting for the controller manager's verdict after this long")
	cmd.AddCommand(svc)
	return cmd
}

// NewUnexportCommand returns liqoctl unexport, with its service
// subcommand.
func NewUnexportCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "unexport",
		Short: "Stop exporting a resource to the clusterset",
		Long: `Stop sharing a resource of the local cluster with its clusterset, undoing
liqoctl export. The resource is a Service: its ServiceExport is deleted.`,
		Example: `  liqoctl unexport service hello -n demo`,
		Args:    cobra.NoArgs,
	}
	o := &UnexportOptions{}
	svc := &cobra.Command{
		Use:     "service NAME",
		Aliases: []string{"svc"},
		Short:   "Stop exporting a Service to the clusterset",
		Long: `Stop exporting a Service: the command deletes its ServiceExport, and Liqo
withdraws the cluster's endpoints from every cluster that imports it. The
Service itself is never touched. A Service that is not exported is
reported as such (exit status 0).`,
		Example:           `  liqoctl unexport service hello -n demo`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completion.ExportedService,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			o.out = &output.Printer{W: cmd.OutOrStdout()}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			return o.Run(ctx)
		},
	}
	fs := svc.Flags()
	o.Local.AddLocalConnectionFlags(fs)
	fs.StringVarP(&o.Namespace, "namespace", "n", "default", "namespace of the Service")
	fs.DurationVar(&o.Timeout, "timeout", 30*time.Second, "give up waiting for the ServiceExport to be deleted after this long")
	cmd.AddCommand(svc)
	return cmd
}
