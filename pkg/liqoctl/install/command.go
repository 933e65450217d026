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
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/cli/values"
	"helm.sh/helm/v3/pkg/getter"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/coredns"
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
	dumpValuesPath    string
	timeout           time.Duration
	// clusterName is --cluster-name, the v0.5 manual's name of
	// --cluster-id (with install gke, --cluster-id names the GKE cluster).
	clusterName    string
	verbose        bool
	repoURL        string
	localChartPath string
	cloud          cloudFlags
	// configureDNS makes the cluster's CoreDNS serve clusterset.local once
	// Liqo is installed.
	configureDNS bool
}

// NewCommand returns liqoctl install.
func NewCommand() *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:     "install [generic|kubeadm|kind|k3s|openshift|aks|eks|gke]",
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
  openshift  read from OpenShift's Network "cluster" (config.openshift.io)
  aks, eks, gke  --pod-cidr and --service-cidr are required: this liqoctl
           does not call the cloud's API (the error says which cloud CLI
           command prints them); the cluster name defaults to the cloud's
           (--resource-name, --eks-cluster-name, gke's --cluster-id), and
           the cloud's credential and location flags are accepted and
           ignored, with a warning
Either way they are checked: every pod IP must be inside the pod CIDR and
every ClusterIP inside the service CIDR.

The cluster's name (--cluster-id, or --cluster-name as the v0.5 manual calls
it) is kept from an earlier install, else a random one.

Values are merged in this order, each overriding the one before: the chart's,
those of the flags above, --values files, --set. With --only-output-values
the merged values are written to --dump-values-path (values.yaml; - for
stdout) and nothing is installed; if the cluster cannot be reached, the
values are those the flags give, and what could not be detected is left
empty, with a warning.

With --configure-dns, once Liqo is installed, the cluster's CoreDNS
(Deployment and ConfigMap coredns in kube-system, CoreDNS 1.12 or later) is
made to serve the Multi-Cluster Services zone clusterset.local: its
ClusterRole system:coredns may list and watch ServiceImports, and the
Corefile's kubernetes plugin gets the zone and the option "multicluster
clusterset.local". CoreDNS loads the Corefile through its reload plugin or,
without one, as its Deployment is rolled. Where the DNS is not such a
CoreDNS, the command fails naming the edits to make by hand.

The chart is the one embedded in liqoctl, or a development one: a clone of
the git repository --repo-url at --version (a commit), or the chart at
--local-chart-path; their CRDs are applied too.`,
		Example: `  liqoctl install kind --cluster-name rome
  liqoctl install kind --cluster-id milan --kubeconfig "$KUBECONFIG_MILAN"
  liqoctl install kubeadm --cluster-labels region=eu,zone=a --enable-ha
  liqoctl install k3s --api-server-url https://k3s.example.com:6443
  liqoctl install generic --pod-cidr 10.244.0.0/16 --service-cidr 10.96.0.0/12 \
      --api-server-url https://203.0.113.10:6443
  liqoctl install aks --resource-name rome --pod-cidr 10.244.0.0/16 --service-cidr 10.0.0.0/16
  liqoctl install kubeadm --configure-dns
  liqoctl install kind --only-output-values --dump-values-path values.yaml
  liqoctl install kind --version 0123abc --repo-url https://github.com/example/liqo-fork.git
  liqoctl install kind --local-chart-path ./deploy/charts/liqo`,
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: Providers,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.provider = "generic"
			if len(args) == 1 {
				o.provider = args[0]
			}
			ignored, err := checkCloudFlags(cmd.Flags(), o.provider)
			if err != nil {
				return err
			}
			// With --only-output-values, stdout may hold the values alone.
			progress := cmd.OutOrStdout()
			if o.onlyOutputValues {
				progress = cmd.ErrOrStderr()
			}
			p := &output.Printer{W: progress, Verbose: o.verbose}
			if len(ignored) > 0 {
				p.Warn("%s ignored: this liqoctl does not call the cloud's API", strings.Join(ignored, ", "))
			}
			if managedAPIServer(o.provider) {
				p.Warn("%s's API server presents no client certificate to webhooks: the webhooks answer any caller that reaches their port (webhook.clientAuth.enabled=false)", o.provider)
			}
			return o.run(cmd.Context(), p, cmd.OutOrStdout())
		},
	}
	fs := cmd.Flags()
	o.cluster.AddLocalFlags(fs)
	fs.StringVar(&o.clusterID, "cluster-id", "", "name of this cluster as its peers see it, a DNS label (default: kept from an earlier install, else a random one); with install gke, the GKE cluster's name, which is the default")
	fs.StringVar(&o.clusterName, "cluster-name", "", "the same as --cluster-id (the v0.5 manual's name for it)")
	fs.BoolVarP(&o.verbose, "verbose", "v", false, "also print Helm's log and how long each step took")
	fs.StringVar(&o.repoURL, "repo-url", "", "install the chart of a clone of this git repository at --version (a commit), instead of the embedded one")
	fs.StringVar(&o.localChartPath, "local-chart-path", "", "install the chart in this directory (or .tgz), instead of the embedded one")
	fs.StringVar(&o.dumpValuesPath, "dump-values-path", "values.yaml", "with --only-output-values, the file the values are written to (-: stdout)")
	o.cloud.bind(fs)
	fs.StringToStringVar(&o.clusterLabels, "cluster-labels", nil, "labels of this cluster given to the virtual nodes that stand for it, as k=v,k=v")
	fs.IntVar(&o.sharingPercentage, "sharing-percentage", 50, "percentage of the physical nodes' allocatable resources shared with consumers")
	fs.StringSliceVar(&o.reservedSubnets, "reserved-subnets", nil, "comma-separated networks never given to a peer's CIDR (the nodes' network, anything routed locally)")
	fs.StringVar(&o.podCIDR, "pod-cidr", "", "network of the cluster's pods (default: detected, but for the generic provider)")
	fs.StringVar(&o.serviceCIDR, "service-cidr", "", "network of the cluster's Services (default: detected, but for the generic provider)")
	fs.StringVar(&o.apiServerURL, "api-server-url", "", "URL at which peers reach this cluster's API server (default: the kubeconfig's server, unless it is a loopback address)")
	fs.BoolVar(&o.enableHA, "enable-ha", false, "run two replicas of the controller manager (one active, the other serving the webhooks and ready to take over) and of each network gateway (active/standby)")
	fs.StringVar(&o.version, "version", version.Version(), "version of the components (their images' tag)")
	fs.StringVar(&o.repository, "repository", "", "registry and path prefix of the components' images (default: the chart's, ghcr.io/liqo-go)")
	fs.StringSliceVarP(&o.values.ValueFiles, "values", "f", nil, "YAML file of chart values (repeatable)")
	fs.StringArrayVar(&o.values.Values, "set", nil, "chart value as key=value (repeatable, comma-separated)")
	fs.StringArrayVar(&o.values.StringValues, "set-string", nil, "chart value as key=value, always a string (repeatable)")
	fs.BoolVar(&o.onlyOutputValues, "only-output-values", false, "write the merged chart values to --dump-values-path and install nothing")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Minute, "how long to wait for the components to be ready before undoing the install or upgrade")
	fs.BoolVar(&o.configureDNS, "configure-dns", false, "once installed, make the cluster's CoreDNS (kube-system/coredns, 1.12 or later) serve clusterset.local for the imported Services")
	cmd.MarkFlagsMutuallyExclusive("configure-dns", "only-output-values")
	addUnsupportedFlags(fs)
	return cmd
}

func (o *options) run(ctx context.Context, p *output.Printer, stdout io.Writer) error {
	if !contains(Providers, o.provider) {
		return fmt.Errorf("unknown provider %q: use one of %s", o.provider, strings.Join(Providers, ", "))
	}
	name, err := o.wantedName()
	if err != nil {
		return err
	}
	if o.localChartPath != "" && o.repoURL != "" {
		return fmt.Errorf("--local-chart-path and --repo-url both name the chart: give one")
	}
	if o.repoURL != "" && o.version == version.Version() {
		return fmt.Errorf("--repo-url needs --version, the commit of the repository whose chart to install")
	}
	given, err := o.givenNetworks()
	if err != nil {
		return err
	}
	ns := o.cluster.Namespace

	p.Step("Connecting to the cluster")
	connErr := o.cluster.Connect(ctx, 10*time.Second)
	if connErr != nil && !o.onlyOutputValues {
		return connErr
	}
	var apiURL, id string
	nets := given
	if connErr != nil {
		// --only-output-values without the cluster: the flags' values.
		p.Warn("the cluster cannot be reached (%v): the values are the flags' alone", connErr)
		apiURL, nets, id, err = o.offline(given, name)
		if err != nil {
			return err
		}
		for what, missing := range map[string]bool{
			"apiServer.address (--api-server-url)": apiURL == "",
			"ipam.podCIDR (--pod-cidr)":            !nets.pod.IsValid(),
			"ipam.serviceCIDR (--service-cidr)":    !nets.service.IsValid(),
		} {
			if missing {
				p.Warn("%s is left empty: give it before installing these values", what)
			}
		}
	} else {
		cs := o.cluster.Clientset
		if apiURL, err = o.apiServer(ctx); err != nil {
			return err
		}
		p.Step("Finding the cluster's networks (%s)", o.provider)
		if nets, err = detect(ctx, cs, o.cluster.Config, o.provider, given, o.cloudHint()); err != nil {
			return err
		}
		if err := validate(ctx, cs, nets); err != nil {
			return err
		}
		p.Step("  pods %s, Services %s", nets.pod, nets.service)
		if id, err = o.clusterIdentity(ctx, ns, name); err != nil {
			return err
		}
	}

	c, cleanup, err := o.loadChart(ctx, p)
	defer cleanup()
	if err != nil {
		return err
	}
	chartCRDs, err := o.chartCRDs(c)
	if err != nil {
		return err
	}
	vals, err := o.mergedValues(id, apiURL, nets)
	if err != nil {
		return err
	}
	if msg, err := unknownValue(c.Schema, vals); err != nil || msg != "" {
		if err == nil {
			err = fmt.Errorf("%s", msg)
		}
		return err
	}
	if o.onlyOutputValues {
		return o.dumpValues(c, vals, p, stdout)
	}

	debug := func(string, ...any) {}
	if o.verbose {
		debug = func(format string, args ...any) { fmt.Fprintf(p.W, "DEBUG: "+format+"\n", args...) }
	}
	cfg, err := helmConfig(&o.cluster, ns, debug)
	if err != nil {
		return err
	}
	p.Step("Applying the CRDs")
	start := time.Now()
	if chartCRDs != nil {
		err = crds.Apply(ctx, o.cluster.Config, chartCRDs)
	} else {
		err = crds.Install(ctx, o.cluster.Config)
	}
	if err != nil {
		return err
	}
	p.Timed(start, "CRDs applied")
	start = time.Now()
	p.Step("Installing the chart (release %s in namespace %s, version %s); waiting up to %s for the components", ReleaseName, ns, o.version, o.timeout)
	var pods notReadyWatch
	watchCtx, stopWatch := context.WithCancel(ctx)
	go pods.watch(watchCtx, o.cluster.Clientset, ns, 2*time.Second)
	rel, upgraded, err := installOrUpgrade(ctx, cfg, ns, c, vals, o.timeout)
	stopWatch()
	if err != nil {
		return fmt.Errorf("installing the chart: %w (the release is left as before)", pods.explain(err))
	}
	what := "Installed"
	if upgraded {
		what = "Upgraded"
	}
	p.Timed(start, "%s Liqo %s as cluster %q (release %s, revision %d)", what, o.version, id, rel.Name, rel.Version)
	if o.configureDNS {
		// Liqo is in place either way: a DNS that cannot be configured
		// fails the command, with the edits to make by hand.
		if err := coredns.Configure(ctx, o.cluster.Clientset, p); err != nil {
			return fmt.Errorf("the cluster's DNS is not configured for %s (Liqo itself is installed): %w", coredns.ClustersetZone, err)
		}
	}
	p.Info("All set: peer with another cluster next (liqoctl peer --help)")
	return nil
}

// wantedName is the cluster name the flags ask for: --cluster-name, else
// --cluster-id, else the cloud's name of the cluster; "" for none.
func (o *options) wantedName() (string, error) {
	name := o.clusterName
	switch {
	case name != "" && o.clusterID != "" && name != o.clusterID && o.provider != "gke":
		return "", fmt.Errorf("--cluster-name %q and --cluster-id %q differ: they are the same setting, give one", name, o.clusterID)
	case name == "" && o.provider != "gke":
		name = o.clusterID
	}
	flag := "--cluster-name"
	if name == "" {
		name = o.cloudName()
		flag = map[string]string{"aks": "--resource-name", "eks": "--eks-cluster-name", "gke": "--cluster-id"}[o.provider]
	} else if o.clusterName == "" {
		flag = "--cluster-id"
	}
	if name != "" {
		if err := consts.ValidateClusterID(name); err != nil {
			return "", fmt.Errorf("%s: %w", flag, err)
		}
	}
	return name, nil
}

// offline is what --only-output-values takes from the flags alone when the
// cluster cannot be reached: the API server URL, the networks (k3s's
// defaults for k3s) and the cluster name ("" lets the chart keep or pick
// one).
func (o *options) offline(given networks, name string) (string, networks, string, error) {
	apiURL := ""
	if o.apiServerURL != "" {
		if err := checkAPIServerURL(o.apiServerURL); err != nil {
			return "", given, "", err
		}
		apiURL = o.apiServerURL
	}
	if o.provider == "k3s" {
		if !given.pod.IsValid() {
			given.pod = k3sPodCIDR
		}
		if !given.service.IsValid() {
			given.service = k3sServiceCIDR
		}
	}
	return apiURL, given, name, nil
}

// dumpValues writes the chart's values merged with vals to
// --dump-values-path, or to stdout for "-".
func (o *options) dumpValues(c *chart.Chart, vals map[string]any, p *output.Printer, stdout io.Writer) error {
	full, err := chartutil.CoalesceValues(c, vals)
	if err != nil {
		return err
	}
	b, err := yaml.Marshal(full.AsMap())
	if err != nil {
		return err
	}
	if o.dumpValuesPath == "-" {
		_, err = stdout.Write(b)
		return err
	}
	if err := os.WriteFile(o.dumpValuesPath, b, 0o600); err != nil {
		return fmt.Errorf("--dump-values-path: %w", err)
	}
	p.Info("Values written to %s (helm install liqo CHART --namespace %s --values %s installs them)", o.dumpValuesPath, o.cluster.Namespace, o.dumpValuesPath)
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
		if err := checkAPIServerURL(o.apiServerURL); err != nil {
			return "", err
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

func checkAPIServerURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return fmt.Errorf("--api-server-url %q is not an https://host[:port] URL", s)
	}
	return nil
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
func (o *options) clusterIdentity(ctx context.Context, ns, name string) (string, error) {
	cm, err := o.cluster.Clientset.CoreV1().ConfigMaps(ns).Get(ctx, consts.ClusterIDConfigMap, metav1.GetOptions{})
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("reading ConfigMap %s/%s: %w", ns, consts.ClusterIDConfigMap, err)
	}
	kept := ""
	if err == nil {
		kept = cm.Data[consts.ClusterIDKey]
	}
	switch {
	case kept != "" && name != "" && kept != name:
		return "", fmt.Errorf("this cluster is already known to its peers as %q (ConfigMap %s/%s): the name %q would rename it", kept, ns, consts.ClusterIDConfigMap, name)
	case name != "":
		return name, nil
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
		"ipam": map[string]any{"podCIDR": prefixString(nets.pod), "serviceCIDR": prefixString(nets.service),
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
		base["gateway"] = map[string]any{"replicas": 2}
	}
	if o.repository != "" {
		base["image"] = map[string]any{"repository": o.repository}
	}
	if managedAPIServer(o.provider) {
		base["webhook"] = map[string]any{"clientAuth": map[string]any{"enabled": false}}
	}
	user, err := o.values.MergeValues(getter.Providers{})
	if err != nil {
		return nil, fmt.Errorf("reading --values/--set: %w", err)
	}
	return chartutil.MergeTables(user, base), nil
}

// prefixString is p in CIDR notation, "" if p is not set.
func prefixString(p netip.Prefix) string {
	if !p.IsValid() {
		return ""
	}
	return p.String()
}

func toAny(ss []string) []any {
	out := make([]any, 0, len(ss))
	for _, s := range ss {
		out = append(out, s)
	}
	return out
}
