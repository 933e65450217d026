// Package factory builds the clients liqoctl commands use from kubectl's
// connection flags (k8s.io/cli-runtime's --kubeconfig, --context, --server,
// --token, ..., with --remote- twins for the remote cluster) and
// $KUBECONFIG, and finds the Liqo components in a cluster.
package factory

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
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
	// namespaceFlag is the flag that set Namespace, of --namespace and
	// its reference-named alias (namespaceValue).
	namespaceFlag string
	// TenantNamespace is the peer's tenant namespace -n named, on the
	// commands about one peer (AddPeerFlags), where the reference's -n
	// names it; empty if -n named where Liqo runs, or was not given.
	TenantNamespace string
	// aboutPeer is set by AddPeerFlags: -n may name a tenant namespace.
	aboutPeer bool
	// RESTConfig, if set, is used instead of a kubeconfig: credentials
	// built in memory (liqoctl peer out-of-band).
	RESTConfig *rest.Config

	Config    *rest.Config
	Client    client.Client
	Clientset kubernetes.Interface

	// conn holds kubectl's other connection flags (--cluster, --user,
	// --server, --token, --as, ...) once Add*Flags bound them; nil for a
	// Cluster built in code, which reads its kubeconfig only.
	conn *genericclioptions.ConfigFlags
	// local is, for a remote cluster bound by AddRemoteFlags, the local
	// cluster whose kubeconfig --remote-context names a context of when
	// --remote-kubeconfig is not given.
	local *Cluster
}

// AddLocalFlags binds the local cluster's flags, named as kubectl names
// them: --kubeconfig, --context, the rest of kubectl's connection flags
// (k8s.io/cli-runtime's ConfigFlags) and --namespace, which names the
// namespace where Liqo runs (also as --liqo-namespace, the reference's
// name for it).
func (c *Cluster) AddLocalFlags(fs *pflag.FlagSet) {
	c.AddLocalConnectionFlags(fs)
	c.bindNamespace(fs, "")
}

// AddPeerFlags binds AddLocalFlags' flags on a command about one peer
// (the manual peering and network steps, ResourceSlices, virtual nodes),
// where the reference's -n names the peer's tenant namespace and its
// --liqo-namespace where Liqo runs. Both forms work: -n liqo-tenant-<ID>
// sets TenantNamespace (PeerID checks it against --remote-cluster-id),
// any other -n names where Liqo runs, as on every other command.
func (c *Cluster) AddPeerFlags(fs *pflag.FlagSet) {
	c.aboutPeer = true
	c.AddLocalFlags(fs)
	fs.Lookup("namespace").Usage = "namespace where Liqo runs in the local cluster; or, as in Liqo's liqoctl, the peer's tenant namespace (liqo-tenant-<its cluster ID>)"
}

// PeerID is the peer a command about one peer acts on: remoteID (its
// --remote-cluster-id) or, without it, the cluster whose tenant namespace
// -n named. Here a peer's tenant namespace is always liqo-tenant-<its
// cluster ID>, so -n naming another peer's is an error.
func (c *Cluster) PeerID(remoteID string) (string, error) {
	if c.TenantNamespace == "" {
		return remoteID, nil
	}
	id, _ := consts.ClusterIDOfTenantNamespace(c.TenantNamespace)
	if remoteID != "" && id != remoteID {
		return "", fmt.Errorf("-n %s is the tenant namespace of cluster %q, not of --remote-cluster-id %q (the tenant namespace of %[3]s is always %s)",
			c.TenantNamespace, id, remoteID, consts.TenantNamespace(remoteID))
	}
	return id, nil
}

// AddLocalConnectionFlags binds the local cluster's flags but --namespace:
// for the commands whose -n, as kubectl's, names the namespace of the
// object they act on.
func (c *Cluster) AddLocalConnectionFlags(fs *pflag.FlagSet) {
	c.Role = "local"
	fs.Var(kubeconfigFlag{c}, "kubeconfig", "path to the kubeconfig of the local cluster (default: $KUBECONFIG or ~/.kube/config)")
	fs.StringVar(&c.Context, "context", "", "kubeconfig context of the local cluster")
	c.conn = bindConnectionFlags(fs, "", c.Role)
}

// bindNamespace binds --namespace (-n for the local cluster) and
// --liqo-namespace, the reference's name for it on the commands where its
// --namespace names a tenant namespace, prefixed with prefix. Here a peer's
// tenant namespace is always liqo-tenant-<its cluster ID>, so both name
// where Liqo runs; given different values, the parse fails.
func (c *Cluster) bindNamespace(fs *pflag.FlagSet, prefix string) {
	c.Namespace = consts.DefaultNamespace
	short := "n"
	if prefix != "" {
		short = ""
	}
	fs.VarP(namespaceValue{c, prefix + "namespace"}, prefix+"namespace", short, "namespace where Liqo runs in the "+c.Role+" cluster")
	fs.Lookup(prefix + "namespace").DefValue = consts.DefaultNamespace
	alias := prefix + "liqo-namespace"
	fs.Var(namespaceValue{c, alias}, alias, "the same as --"+prefix+"namespace (the reference's name)")
	fs.Lookup(alias).DefValue = consts.DefaultNamespace
	_ = fs.MarkHidden(alias)
}

// namespaceValue is the value of --namespace and --liqo-namespace (and
// their --remote- twins), which set the same Cluster's Namespace.
type namespaceValue struct {
	c    *Cluster
	name string
}

func (v namespaceValue) String() string { return v.c.Namespace }
func (v namespaceValue) Type() string   { return "string" }
func (v namespaceValue) Set(s string) error {
	if _, tenant := consts.ClusterIDOfTenantNamespace(s); tenant {
		if !v.c.aboutPeer || v.name != "namespace" {
			return fmt.Errorf("%q is a tenant namespace, and --%s names the namespace where Liqo runs (%s by default)", s, v.name, consts.DefaultNamespace)
		}
		v.c.TenantNamespace = s
		return nil
	}
	if prev := v.c.namespaceFlag; prev != "" && prev != v.name && s != v.c.Namespace {
		return fmt.Errorf("--%s is %q: both name the namespace where Liqo runs (a peer's tenant namespace is always %s<its cluster ID>); give one",
			prev, v.c.Namespace, consts.TenantNamespace(""))
	}
	v.c.Namespace, v.c.namespaceFlag = s, v.name
	return nil
}

// AddRemoteFlags binds the remote cluster's flags: those of AddLocalFlags
// prefixed with remote-. local is the command's local cluster: without
// --remote-kubeconfig, --remote-context (or --remote-server) is read from
// the local cluster's kubeconfig, so that one kubeconfig with a context for
// each cluster is enough, as with kubectl.
func (c *Cluster) AddRemoteFlags(fs *pflag.FlagSet, local *Cluster) {
	c.Role = "remote"
	c.local = local
	fs.Var(kubeconfigFlag{c}, "remote-kubeconfig", "path to the kubeconfig of the remote cluster (default: the local cluster's, with --remote-context)")
	fs.StringVar(&c.Context, "remote-context", "", "kubeconfig context of the remote cluster; without --remote-kubeconfig, a context of the local cluster's kubeconfig")
	c.conn = bindConnectionFlags(fs, "remote-", c.Role)
	c.bindNamespace(fs, "remote-")
}

// kubeconfigFlag is the value of --kubeconfig and --remote-kubeconfig: it
// sets the Cluster's Kubeconfig, and lets FromFlags find the Cluster a
// command bound, for its shell completion.
type kubeconfigFlag struct{ c *Cluster }

func (f kubeconfigFlag) String() string     { return f.c.Kubeconfig }
func (f kubeconfigFlag) Set(v string) error { f.c.Kubeconfig = v; return nil }
func (f kubeconfigFlag) Type() string       { return "string" }

// FromFlags returns the cluster of role ("local" or "remote") whose flags
// AddLocalFlags or AddRemoteFlags bound in fs, as the parsed flags set it;
// nil if fs has none. Shell completion, which gets the command and not its
// options, reaches the clusters with it.
func FromFlags(fs *pflag.FlagSet, role string) *Cluster {
	name := "kubeconfig"
	if role == "remote" {
		name = "remote-kubeconfig"
	}
	if f := fs.Lookup(name); f != nil {
		if v, ok := f.Value.(kubeconfigFlag); ok {
			return v.c
		}
	}
	return nil
}

// LoadKubeconfig returns the kubeconfig the cluster's flags name, its
// files merged as kubectl merges $KUBECONFIG's, without connecting: the
// contexts, clusters and users its flags may name.
func (c *Cluster) LoadKubeconfig() (*clientcmdapi.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = c.Kubeconfig
	if c.Kubeconfig == "" && c.local != nil {
		rules.ExplicitPath = c.local.Kubeconfig
	}
	return rules.Load()
}

// RemoteFlags are the flags of which a command taking a remote cluster
// needs one (RequireRemote).
var RemoteFlags = []string{"remote-kubeconfig", "remote-context", "remote-server"}

// RequireRemote makes cmd, whose remote cluster AddRemoteFlags bound,
// refuse to run, as used wrongly, unless a flag names the remote cluster:
// the local kubeconfig's current context is the local cluster.
func RequireRemote(cmd *cobra.Command) {
	cmd.MarkFlagsOneRequired(RemoteFlags...)
}

// connectionUsage is the help of cli-runtime's connection flags, in
// liqoctl's words, for the cluster of role %[1]s.
var connectionUsage = map[string]string{
	"as":                       "user to impersonate in the %[1]s cluster",
	"as-group":                 "group to impersonate in the %[1]s cluster (repeatable)",
	"as-uid":                   "UID to impersonate in the %[1]s cluster",
	"certificate-authority":    "path to the CA certificate of the %[1]s cluster's API server",
	"client-certificate":       "path to a client certificate for the %[1]s cluster",
	"client-key":               "path to the client key for the %[1]s cluster",
	"cluster":                  "kubeconfig cluster of the %[1]s cluster",
	"user":                     "kubeconfig user for the %[1]s cluster",
	"token":                    "bearer token for the %[1]s cluster",
	"server":                   "address of the %[1]s cluster's API server, instead of the kubeconfig's",
	"tls-server-name":          "name to check the %[1]s cluster's API server certificate against (default: its host name)",
	"insecure-skip-tls-verify": "do not check the %[1]s cluster's API server certificate (insecure)",
	"disable-compression":      "do not ask the %[1]s cluster's API server for compressed responses",
	"request-timeout":          "timeout of each request to the %[1]s cluster, e.g. 10s (0: none)",
}

// bindConnectionFlags binds cli-runtime's connection flags other than
// --kubeconfig, --context and --namespace (which the Cluster binds itself:
// Liqo's --namespace names where Liqo runs) and --cache-dir (liqoctl
// caches no discovery), named with prefix and described for the cluster of
// role. The prefixed twins have no shorthand.
func bindConnectionFlags(fs *pflag.FlagSet, prefix, role string) *genericclioptions.ConfigFlags {
	cf := genericclioptions.NewConfigFlags(false)
	cf.KubeConfig, cf.Context, cf.Namespace, cf.CacheDir = nil, nil, nil, nil
	tmp := pflag.NewFlagSet("connection", pflag.ContinueOnError)
	cf.AddFlags(tmp)
	tmp.VisitAll(func(f *pflag.Flag) {
		if usage, ok := connectionUsage[f.Name]; ok {
			f.Usage = fmt.Sprintf(usage, role)
		} else {
			f.Usage += " (" + role + " cluster)"
		}
		if prefix != "" {
			f.Name, f.Shorthand = prefix+f.Name, ""
		}
		fs.AddFlag(f)
	})
	return cf
}

// ErrNoRemote is returned by Connect for a remote cluster no flag names.
var ErrNoRemote = errors.New("no remote cluster given: pass --remote-kubeconfig FILE, or --remote-context CONTEXT naming a context of the local cluster's kubeconfig")

// kubeconfig is the path of the kubeconfig to read ("" for $KUBECONFIG or
// the default one).
func (c *Cluster) kubeconfig() (string, error) {
	if c.Kubeconfig != "" || c.local == nil {
		return c.Kubeconfig, nil
	}
	if c.Context == "" && (c.conn == nil || *c.conn.APIServer == "") {
		return "", ErrNoRemote
	}
	return c.local.Kubeconfig, nil
}

// restConfig loads the cluster's configuration from its kubeconfig and
// connection flags, with cli-runtime's loader, as kubectl does.
func (c *Cluster) restConfig() (*rest.Config, error) {
	if c.RESTConfig != nil {
		return rest.CopyConfig(c.RESTConfig), nil
	}
	path, err := c.kubeconfig()
	if err != nil {
		return nil, err
	}
	cf := c.conn
	if cf == nil {
		cf = genericclioptions.NewConfigFlags(false)
	}
	cf.KubeConfig, cf.Context = &path, &c.Context
	loader := cf.ToRawKubeConfigLoader()
	cfg, err := loader.ClientConfig()
	if err == nil && noConfig(loader, cf) {
		err = clientcmd.ErrEmptyConfig
	}
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			flag := "--kubeconfig"
			if c.Role == "remote" {
				flag = "--remote-kubeconfig"
			}
			return nil, fmt.Errorf("no kubeconfig for the %s cluster: pass %s FILE or set $KUBECONFIG (%s and the in-cluster configuration have none)",
				c.Role, flag, clientcmd.RecommendedHomeFile)
		}
		what := "the default kubeconfig"
		if path != "" {
			what = path
		}
		return nil, fmt.Errorf("cannot load the %s cluster's kubeconfig (%s): %w", c.Role, what, err)
	}
	return cfg, nil
}

// noConfig tells whether the configuration loader built came from nothing:
// no kubeconfig, no --server, not in a cluster. cli-runtime's loader then
// falls back to kubectl's historical http://localhost:8080 instead of
// failing.
func noConfig(loader clientcmd.ClientConfig, cf *genericclioptions.ConfigFlags) bool {
	raw, err := loader.RawConfig()
	if err != nil || len(raw.Clusters) > 0 || *cf.APIServer != "" {
		return false
	}
	_, err = rest.InClusterConfig()
	return err != nil
}

// Connect loads the kubeconfig and checks that the API server answers
// within timeout, so an unreachable cluster fails in seconds with its
// address in the message instead of at the first real call.
func (c *Cluster) Connect(ctx context.Context, timeout time.Duration) error {
	cfg, err := c.restConfig()
	if err != nil {
		return err
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
