package info

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/liqoctl/completion"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

type options struct {
	cluster factory.Cluster
	verbose bool
	print   *output.Flags
	get     string
	timeout time.Duration
	// peers, for `info peer`: only these peerings, as a document keyed by
	// cluster ID.
	peers []string
}

// NewCommand returns `liqoctl info`.
func NewCommand() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:     "info",
		Aliases: []string{"status"},
		Short:   "Show the local cluster's identity and the state of its peerings",
		Long: `Show the identity of the local cluster and, for every peering, the role of the
remote cluster, the state of the authentication, offloading and networking
modules, the virtual nodes and the resources acquired from providers or
shared with consumers; then, when there are any, the Multi-Cluster Services:
the Services this cluster exports (ServiceExports, and why one is not in)
and those it imports (ServiceImports, with the clusters backing each).

--verbose adds the API server URLs, the tenant namespaces, the resource slices
and the conditions of every module; -o prints the same data as a document,
in kubectl's formats (json, yaml, jsonpath=..., go-template=...).

liqoctl status, the v0.5 manual's name, is the same command: the local
cluster's identity shows its cluster labels.`,
		Example: `  liqoctl info
  liqoctl status --kubeconfig ~/.kube/naples
  liqoctl info --verbose
  liqoctl info -o json --context rome
  liqoctl info -o jsonpath='{.peerings[*].clusterID}'
  liqoctl info --get local.clusterID
  liqoctl info -o jsonpath='{.multiClusterServices.imports[*].name}'
  liqoctl info peer milan --get milan.networking.status`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	o.addFlags(cmd)
	peer := &options{}
	peerCmd := &cobra.Command{
		Use:   "peer CLUSTER_ID...",
		Short: "Show the state of the peerings with the given clusters",
		Long: `Show the peerings with the given remote clusters only. With -o the
document is keyed by cluster ID, so --get takes paths such as
milan.role or milan.networking.status.`,
		Example: `  liqoctl info peer milan
  liqoctl info peer milan paris -o json
  liqoctl info peer milan --get milan.offloading.status`,
		Args:              cobra.MinimumNArgs(1),
		ValidArgsFunction: completion.PeerClusterIDs,
		RunE: func(cmd *cobra.Command, args []string) error {
			peer.peers = args
			return peer.run(cmd)
		},
	}
	peer.addFlags(peerCmd)
	cmd.AddCommand(peerCmd)
	return cmd
}

func (o *options) addFlags(cmd *cobra.Command) {
	fs := cmd.Flags()
	o.cluster.AddLocalFlags(fs)
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "also show URLs, tenant namespaces, resource slices and module conditions")
	o.print = output.NewDocumentFlags()
	o.print.AddFlags(cmd, "print the report as a document (default: the human-readable summary)")
	fs.StringVarP(&o.get, "get", "g", "", "print one field of the -o json document, by its dotted path (local.clusterID, peerings.0.role; in info peer: milan.role), for scripts")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "how long to wait for the cluster's answers")
}

func (o *options) run(cmd *cobra.Command) error {
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
	var doc any = &info
	if len(o.peers) > 0 {
		byID, err := selectPeers(&info, o.peers)
		if err != nil {
			return err
		}
		doc = byID
		info.Peerings = nil
		for _, id := range o.peers {
			info.Peerings = append(info.Peerings, byID[id])
		}
	}
	if o.get != "" {
		v, err := Get(doc, o.get)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(cmd.OutOrStdout(), v)
		return err
	}
	w := cmd.OutOrStdout()
	if o.print.Requested() {
		return o.print.PrintDocument(w, doc)
	}
	summary := Render(&info, o.verbose)
	if len(o.peers) > 0 {
		summary = renderPeerings(info.Peerings, o.verbose)
	}
	_, err = io.WriteString(w, summary)
	return err
}

// selectPeers returns the named peerings by cluster ID, or names those
// this cluster has no peering with.
func selectPeers(info *Info, ids []string) (map[string]Peering, error) {
	have := map[string]Peering{}
	for _, p := range info.Peerings {
		have[p.ClusterID] = p
	}
	out := map[string]Peering{}
	var missing []string
	for _, id := range ids {
		p, ok := have[id]
		if !ok {
			missing = append(missing, id)
			continue
		}
		out[id] = p
	}
	if len(missing) > 0 {
		var known []string
		for id := range have {
			known = append(known, id)
		}
		slices.Sort(known)
		return nil, fmt.Errorf("no peering with %s (peered: %s)", strings.Join(missing, ", "), orNone(known))
	}
	return out, nil
}

func orNone(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	return strings.Join(s, ", ")
}

// collect reads the objects Build needs.
func collect(ctx context.Context, c client.Client) (*Objects, error) {
	var (
		fcs    corev1beta1.ForeignClusterList
		vns    offv1beta1.VirtualNodeList
		quotas offv1beta1.QuotaList
		slices authv1beta1.ResourceSliceList
		conns  netv1beta1.ConnectionList
	)
	for _, l := range []struct {
		what string
		list client.ObjectList
	}{{"ForeignClusters", &fcs}, {"VirtualNodes", &vns}, {"Quotas", &quotas}, {"ResourceSlices", &slices}, {"Connections", &conns}} {
		if err := c.List(ctx, l.list); err != nil {
			return nil, fmt.Errorf("listing the %s of the local cluster: %w", l.what, err)
		}
	}
	objs := &Objects{ForeignClusters: fcs.Items, VirtualNodes: vns.Items, Quotas: quotas.Items, ResourceSlices: slices.Items, Connections: conns.Items}
	// The Multi-Cluster Services API is optional: a cluster without its
	// CRDs has no exports or imports to show.
	var exports mcsv1beta1.ServiceExportList
	var imports mcsv1beta1.ServiceImportList
	for _, l := range []struct {
		what string
		list client.ObjectList
	}{{"ServiceExports", &exports}, {"ServiceImports", &imports}} {
		if err := c.List(ctx, l.list); err != nil && !meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("listing the %s of the local cluster: %w", l.what, err)
		}
	}
	objs.Exports, objs.Imports = exports.Items, imports.Items
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
