package info

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
)

// Output formats accepted by -o/--output; empty is the human summary.
const (
	OutputJSON = "json"
	OutputYAML = "yaml"
)

type options struct {
	cluster factory.Cluster
	verbose bool
	output  string
	timeout time.Duration
}

// NewCommand returns `liqoctl info`.
func NewCommand() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:   "info",
		Short: "Show the local cluster's identity and the state of its peerings",
		Long: `Show the identity of the local cluster and, for every peering, the role of the
remote cluster, the state of the authentication, offloading and networking
modules, the virtual nodes and the resources acquired from providers or
shared with consumers.

--verbose adds the API server URLs, the tenant namespaces, the resource slices
and the conditions of every module; -o json|yaml prints the same data as a
document.`,
		Example: `  liqoctl info
  liqoctl info --verbose
  liqoctl info -o json --context rome`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	fs := cmd.Flags()
	o.cluster.AddLocalFlags(fs)
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "also show URLs, tenant namespaces, resource slices and module conditions")
	fs.StringVarP(&o.output, "output", "o", "", "output format: json or yaml (default: human-readable summary)")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "how long to wait for the cluster's answers")
	return cmd
}

func (o *options) run(cmd *cobra.Command) error {
	if o.output != "" && o.output != OutputJSON && o.output != OutputYAML {
		return fmt.Errorf("unsupported output format %q: allowed values are %q and %q (or none, for the human-readable summary)",
			o.output, OutputJSON, OutputYAML)
	}
	if o.timeout <= 0 {
		return fmt.Errorf("--timeout must be positive, got %s", o.timeout)
	}
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()

	if err := o.cluster.Connect(ctx, o.timeout); err != nil {
		return err
	}
	id, err := o.cluster.FindComponents(ctx)
	if err != nil {
		return err
	}
	objs, err := collect(ctx, o.cluster.Client)
	if err != nil {
		return err
	}
	local := LocalCluster{ClusterID: id.ID, Labels: ParseLabels(id.Labels), Namespace: o.cluster.Namespace,
		APIServerURL: o.cluster.Config.Host}
	info := Build(local, objs)
	return write(cmd, &info, o.output, o.verbose)
}

// collect reads the objects Build needs.
func collect(ctx context.Context, c client.Client) (*Objects, error) {
	var (
		fcs    corev1beta1.ForeignClusterList
		vns    offv1beta1.VirtualNodeList
		quotas offv1beta1.QuotaList
		slices authv1beta1.ResourceSliceList
	)
	for _, l := range []struct {
		what string
		list client.ObjectList
	}{{"ForeignClusters", &fcs}, {"VirtualNodes", &vns}, {"Quotas", &quotas}, {"ResourceSlices", &slices}} {
		if err := c.List(ctx, l.list); err != nil {
			return nil, fmt.Errorf("listing the %s of the local cluster: %w", l.what, err)
		}
	}
	objs := &Objects{ForeignClusters: fcs.Items, VirtualNodes: vns.Items, Quotas: quotas.Items, ResourceSlices: slices.Items}
	for i := range vns.Items {
		var n corev1.Node
		err := c.Get(ctx, client.ObjectKey{Name: vns.Items[i].Name}, &n)
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return nil, fmt.Errorf("reading the node of virtual node %s/%s: %w", vns.Items[i].Namespace, vns.Items[i].Name, err)
		default:
			objs.Nodes = append(objs.Nodes, n)
		}
	}
	return objs, nil
}

func write(cmd *cobra.Command, info *Info, output string, verbose bool) error {
	var out []byte
	var err error
	switch output {
	case OutputJSON:
		out, err = json.MarshalIndent(info, "", "  ")
		out = append(out, '\n')
	case OutputYAML:
		out, err = yaml.Marshal(info)
	default:
		out = []byte(Render(info, verbose))
	}
	if err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(out)
	return err
}
