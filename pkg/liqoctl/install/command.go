// Package install implements liqoctl install and uninstall: the Helm chart
// embedded in liqoctl, installed or upgraded through the Helm SDK, with the
// cluster's networks detected per provider and checked against its pods and
// Services, and the CRDs applied by liqoctl (Helm never updates them).
package install

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	chartfs "github.com/liqo-go/liqo/deploy/charts/liqo"
	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/liqoctl/version"
)

type options struct {
	cluster           factory.Cluster
	provider          string
	clusterID         string
	clusterLabels     map[string]string
	sharingPercentage int
	reservedSubnets   []string
	podCIDR           string
	serviceCIDR       string
	apiServerURL      string
	enableHA          bool
	version           string
	repository        string
	values            values.Options
	onlyOutputValues  bool
	timeout           time.Duration
}

// NewCommand returns liqoctl install.
func NewCommand() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:     "install [generic|kubeadm|kind|k3s]",
		Aliases: []string{"upgrade"},
		Short:   "Install Liqo in a cluster, or upgrade it in place",
		Long: `Install Liqo in the cluster of the kubeconfig, from the Helm chart embedded in
liqoctl, as the Helm release "liqo" in namespace liqo (--namespace). Running it
again upgrades the release in place; the CRDs are updated first (a change that
would drop a version objects are stored in is refused).

The provider says how the cluster's networks are found:
  generic  --pod-cidr and --service-cidr are required
  kubeadm  read from the kube-controller-manager's --cluster-cidr and
           --service-cluster-ip-range
  kind     as kubeadm; peers reach the API server at the control-plane
           node's address
  k3s      k3s's defaults, 10.42.0.0/16 and 10.43.0.0/16
Either way they are checked: every pod IP must be inside the pod CIDR and
every ClusterIP inside the service CIDR.

Values are merged in this order, each overriding the one before: the chart's,
those of the flags above, --values files, --set. With --only-output-values
the merged values are printed and nothing is installed.`,
		Example: `  liqoctl install kind --cluster-id rome
  liqoctl install kubeadm --cluster-labels region=eu,zone=a --enable-ha
  liqoctl install k3s --api-server-url https://k3s.example.com:6443
  liqoctl install generic --pod-cidr 10.244.0.0/16 --service-cidr 10.96.0.0/12 \
      --api-server-url https://203.0.113.10:6443
  liqoctl install kind --only-output-values > values.yaml`,
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: Providers,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.provider = "generic"
			if len(args) == 1 {
				o.provider = args[0]
			}
			// With --only-output-values, stdout holds the values alone.
			progress := cmd.OutOrStdout()
			if o.onlyOutputValues {
				progress = cmd.ErrOrStderr()
			}
			return o.run(cmd.Context(), &output.Printer{W: progress}, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	o.cluster.AddLocalFlags(fs)
	fs.StringVar(&o.clusterID, "cluster-id", "", "name of this cluster as its peers see it, a DNS label (default: kept from an earlier install, else a random one)")
	fs.StringToStringVar(&o.clusterLabels, "cluster-labels", nil, "labels of this cluster given to the virtual nodes that stand for it, as k=v,k=v")
	fs.IntVar(&o.sharingPercentage, "sharing-percentage", 50, "percentage of the physical nodes' allocatable resources shared with consumers")
	fs.StringSliceVar(&o.reservedSubnets, "reserved-subnets", nil, "comma-separated networks never given to a peer's CIDR (the nodes' network, anything routed locally)")
	fs.StringVar(&o.podCIDR, "pod-cidr", "", "network of the cluster's pods (default: detected, but for the generic provider)")
	fs.StringVar(&o.serviceCIDR, "service-cidr", "", "network of the cluster's Services (default: detected, but for the generic provider)")
	fs.StringVar(&o.apiServerURL, "api-server-url", "", "URL at which peers reach this cluster's API server (default: the kubeconfig's server, unless it is a loopback address)")
	fs.BoolVar(&o.enableHA, "enable-ha", false, "run two controller manager replicas: one active, the other serving the webhooks and ready to take over")
	fs.StringVar(&o.version, "version", version.Version(), "version of the components (their images' tag)")
	fs.StringVar(&o.repository, "repository", "", "registry and path prefix of the components' images (default: the chart's, ghcr.io/liqo-go)")
	fs.StringSliceVarP(&o.values.ValueFiles, "values", "f", nil, "YAML file of chart values (repeatable)")
	fs.StringArrayVar(&o.values.Values, "set", nil, "chart value as key=value (repeatable, comma-separated)")
	fs.StringArrayVar(&o.values.StringValues, "set-string", nil, "chart value as key=value, always a string (repeatable)")
	fs.BoolVar(&o.onlyOutputValues, "only-output-values", false, "print the merged chart values and install nothing")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "how long to wait for the components to be ready before undoing the install or upgrade")
	return cmd
}

func (o *options) run(ctx context.Context, p *output.Printer, stdout io.Writer) error {
	if !contains(Providers, o.provider) {
		return fmt.Errorf("unknown provider %q: use one of %s", o.provider, strings.Join(Providers, ", "))
	}
	if o.clusterID != "" {
		if err := consts.ValidateClusterID(o.clusterID); err != nil {
			return fmt.Errorf("--cluster-id: %w", err)
		}
	}
	given, err := o.givenNetworks()
	if err != nil {
		return err
	}
	ns := o.cluster.Namespace

	p.Step("Connecting to the cluster")
	if err := o.cluster.Connect(ctx, 10*time.Second); err != nil {
		return err
	}
	cs := o.cluster.Clientset

	apiURL, err := o.apiServer(ctx)
	if err != nil {
		return err
	}
	p.Step("Finding the cluster's networks (%s)", o.provider)
	nets, err := detect(ctx, cs, o.provider, given)
	if err != nil {
		return err
	}
	if err := validate(ctx, cs, nets); err != nil {
		return err
	}
	p.Step("  pods %s, Services %s", nets.pod, nets.service)

	id, err := o.clusterIdentity(ctx, ns)
	if err != nil {
		return err
	}

	c, err := chartfs.Load(o.version)
	if err != nil {
		return err
	}
	vals, err := o.mergedValues(id, apiURL, nets)
	if err != nil {
		return err
	}
	if o.onlyOutputValues {
		full, err := chartutil.CoalesceValues(c, vals)
		if err != nil {
			return err
		}
		b, err := yaml.Marshal(full.AsMap())
		if err != nil {
			return err
		}
		_, err = stdout.Write(b)
		return err
	}

	cfg, err := helmConfig(&o.cluster, ns, func(string, ...any) {})
	if err != nil {
		return err
	}
	p.Step("Applying the CRDs")
	if err := crds.Install(ctx, o.cluster.Config); err != nil {
		return err
	}
	start := time.Now()
	p.Step("Installing the chart (release %s in namespace %s, version %s); waiting up to %s for the components", ReleaseName, ns, o.version, o.timeout)
	rel, upgraded, err := installOrUpgrade(ctx, cfg, ns, c, vals, o.timeout)
	if err != nil {
		return fmt.Errorf("installing the chart: %w (the release is left as before)", err)
	}
	what := "Installed"
	if upgraded {
		what = "Upgraded"
	}
	p.Timed(start, "%s Liqo %s as cluster %q (release %s, revision %d)", what, o.version, id, rel.Name, rel.Version)
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// givenNetworks parses --pod-cidr and --service-cidr.
func (o *options) givenNetworks() (networks, error) {
	var n networks
	for flag, in := range map[string]struct {
		v   string
		dst *netip.Prefix
	}{"--pod-cidr": {o.podCIDR, &n.pod}, "--service-cidr": {o.serviceCIDR, &n.service}} {
		if in.v == "" {
			continue
		}
		p, err := netip.ParsePrefix(in.v)
		if err != nil || !p.Addr().Is4() {
			return n, fmt.Errorf("%s %q is not an IPv4 CIDR such as 10.244.0.0/16", flag, in.v)
		}
		*in.dst = p.Masked()
	}
	for _, r := range o.reservedSubnets {
		if _, err := netip.ParsePrefix(r); err != nil {
			return n, fmt.Errorf("--reserved-subnets: %q is not a CIDR", r)
		}
	}
	return n, nil
}

// apiServer is the URL peers reach the API server at: --api-server-url, or
// the kubeconfig's server unless it is loopback, which no peer can reach;
// for kind, whose kubeconfig always is, the control-plane node's address.
func (o *options) apiServer(ctx context.Context) (string, error) {
	if o.apiServerURL != "" {
		u, err := url.Parse(o.apiServerURL)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			return "", fmt.Errorf("--api-server-url %q is not an https://host[:port] URL", o.apiServerURL)
		}
		return o.apiServerURL, nil
	}
	host := o.cluster.Config.Host
	u, err := url.Parse(host)
	if err == nil && !isLoopback(u.Hostname()) {
		return host, nil
	}
	if o.provider == "kind" {
		nodes, err := o.cluster.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "node-role.kubernetes.io/control-plane"})
		if err == nil && len(nodes.Items) > 0 {
			for _, a := range nodes.Items[0].Status.Addresses {
				if a.Type == "InternalIP" {
					return "https://" + a.Address + ":6443", nil
				}
			}
		}
	}
	return "", fmt.Errorf("the kubeconfig's API server %s is a loopback address, which peers cannot reach: pass --api-server-url", host)
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}

// clusterIdentity is --cluster-id, else the ID of an earlier install (a
// different --cluster-id is refused: peers know the cluster by it), else
// a new random one.
func (o *options) clusterIdentity(ctx context.Context, ns string) (string, error) {
	cm, err := o.cluster.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, consts.ClusterIDConfigMap, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("reading ConfigMap %s/%s: %w", ns, consts.ClusterIDConfigMap, err)
	}
	kept := ""
	if err == nil {
		kept = cm.Data[consts.ClusterIDKey]
	}
	switch {
	case kept != "" && o.clusterID != "" && kept != o.clusterID:
		return "", fmt.Errorf("this cluster is already known to its peers as %q (ConfigMap %s/%s): --cluster-id %q would rename it", kept, ns, consts.ClusterIDConfigMap, o.clusterID)
	case o.clusterID != "":
		return o.clusterID, nil
	case kept != "":
		return kept, nil
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return "liqo-" + hex.EncodeToString(b), nil
}

// mergedValues are the flags' values with the --values files and --set
// over them.
func (o *options) mergedValues(id, apiURL string, nets networks) (map[string]any, error) {
	base := map[string]any{
		"clusterID": id,
		"apiServer": map[string]any{"address": apiURL},
		"tag":       o.version,
		"sharing":   map[string]any{"percentage": o.sharingPercentage},
		"ipam": map[string]any{"podCIDR": nets.pod.String(), "serviceCIDR": nets.service.String(),
			"reservedSubnets": toAny(o.reservedSubnets)},
	}
	if len(o.clusterLabels) > 0 {
		labels := map[string]any{}
		for k, v := range o.clusterLabels {
			labels[k] = v
		}
		base["clusterLabels"] = labels
	}
	if o.enableHA {
		base["controllerManager"] = map[string]any{"replicas": 2}
	}
	if o.repository != "" {
		base["image"] = map[string]any{"repository": o.repository}
	}
	user, err := o.values.MergeValues(getter.Providers{})
	if err != nil {
		return nil, fmt.Errorf("reading --values/--set: %w", err)
	}
	return chartutil.MergeTables(user, base), nil
}

func toAny(ss []string) []any {
	out := make([]any, 0, len(ss))
	for _, s := range ss {
		out = append(out, s)
	}
	return out
}
