// Package move is liqoctl move volume: a volume of the liqo StorageClass
// moved, data and all, between the local cluster and a provider (either
// way) or between local nodes, by two liqo-mover pods streaming it through
// the network fabric and checking its digest. The source is deleted only
// once the copy is verified and the PVC bound to it; a failed copy leaves
// the PVC bound to its source as it was.
package move

import (
	"context"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"

	"github.com/liqo-go/liqo/pkg/images/catalog"
	"github.com/liqo-go/liqo/pkg/liqoctl/compat"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/liqoctl/version"
)

// VolumeOptions of liqoctl move volume.
type VolumeOptions struct {
	Local factory.Cluster
	// Name and Namespace are the PVC's.
	Name, Namespace string
	// TargetNode is where the volume goes: a local node or a virtual
	// node (its provider).
	TargetNode string
	// MoverImage runs the two sides of the copy.
	MoverImage string
	// Resources are the movers' container requests and limits.
	Resources corev1.ResourceRequirements
	Timeout   time.Duration
	// ConnectTimeout bounds how long the movers wait for each other: a
	// fabric that is down fails the copy after it.
	ConnectTimeout time.Duration

	out *output.Printer
}

// NewCommand returns liqoctl move, with its volume subcommand.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "move",
		Short: "Move a resource between clusters",
		Long: `Move a resource, with its data, between the local cluster's nodes and its
providers. Today the resource is the volume of a PVC of the liqo
StorageClass.`,
		Example: `  liqoctl move volume data-db-0 -n shop --target-node liqo-milan`,
		Args:    cobra.NoArgs,
	}
	o := &VolumeOptions{}
	vol := &cobra.Command{
		Use:   "volume NAME",
		Short: "Move a PVC's volume, with its data, to another node or cluster",
		Long: `Move the volume of a PVC of the liqo StorageClass, with its data, to a
target node: a local node, or a virtual node (the volume then lives on its
provider). Pods using the PVC follow it there (data gravity).

No pod may use the PVC meanwhile (scale its workload to zero first). Two
liqo-mover pods copy the files through the network fabric and compare the
SHA-256 digests of both trees; only then is the PVC bound to the new volume
and the old one deleted. A copy that fails (the fabric down, the target
full) leaves the PVC bound to its source volume, unchanged.

The movers run with no resource requests or limits unless the
--containers-cpu-* and --containers-ram-* flags give them (a namespace
whose LimitRange or ResourceQuota demands them needs them).`,
		Example: `  liqoctl move volume data-db-0 -n shop --target-node liqo-milan
  liqoctl move volume data-db-0 --namespace shop --node worker-1
  liqoctl move volume data-db-0 -n shop --target-node liqo-milan --containers-cpu-limits 1000m --containers-ram-limits 512Mi`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Name = args[0]
			o.out = &output.Printer{W: cmd.OutOrStdout()}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			return o.Run(ctx)
		},
	}
	fs := vol.Flags()
	// -n is the PVC's namespace here, as kubectl's, not Liqo's.
	o.Local.AddLocalConnectionFlags(fs)
	fs.StringVarP(&o.Namespace, "namespace", "n", "default", "namespace of the PVC")
	fs.StringVar(&o.TargetNode, "target-node", "", "node to move the volume to: a local node or a virtual node")
	fs.StringVar(&o.TargetNode, "node", "", "the same as --target-node (the v0.5 manual's name)")
	fs.StringVar(&o.MoverImage, "mover-image", DefaultMoverImage(), "image of the pods that copy the data")
	fs.DurationVar(&o.Timeout, "timeout", 10*time.Minute, "give up after this long (a failed copy still leaves the source as it was)")
	fs.DurationVar(&o.ConnectTimeout, "connect-timeout", time.Minute, "how long the two sides of the copy wait to reach each other")
	bindResources(fs, &o.Resources)
	for _, name := range []string{"restic-image", "restic-server-image"} {
		fs.String(name, "", "")
		compat.Refuse(fs, name, "the volume is copied by liqo-mover pods, not by restic: give their image with --mover-image")
	}
	vol.MarkFlagsOneRequired("target-node", "node")
	vol.MarkFlagsMutuallyExclusive("target-node", "node")
	cmd.AddCommand(vol)
	return cmd
}

// DefaultMoverImage is the liqo-mover image of liqoctl's version.
func DefaultMoverImage() string {
	c, err := catalog.Lookup(catalog.Mover)
	if err != nil {
		return ""
	}
	return c.Ref(version.Version())
}
