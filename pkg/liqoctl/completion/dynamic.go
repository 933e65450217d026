package completion

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
)

// timeout bounds what a completion reading the cluster may take: a Tab
// that hangs is worse than one that offers nothing.
const timeout = 5 * time.Second

// Values completes a flag that takes one of values.
func Values(values ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
}

// Register registers, on every command of the tree under root, the
// completion of the flags that mean the same on every command: --context,
// --cluster and --user (and their --remote- twins) with the names of the
// kubeconfig the command reads, -n/--namespace with the local cluster's
// namespaces, --remote-cluster-id with the peers'
// cluster IDs, --consumer-cluster-id with the consumers', and the
// strategies and Service types of the API. A command's own completion of a
// flag, registered before, is kept.
func Register(root *cobra.Command) {
	serviceTypes := Values(string(corev1.ServiceTypeLoadBalancer), string(corev1.ServiceTypeNodePort), string(corev1.ServiceTypeClusterIP))
	byFlag := map[string]cobra.CompletionFunc{
		"namespace":           namespaceFlag,
		"remote-cluster-id":   PeerClusterIDs,
		"consumer-cluster-id": ConsumerClusterIDs,
		"pod-offloading-strategy": Values(string(offv1beta1.LocalAndRemotePodOffloadingStrategy),
			string(offv1beta1.LocalPodOffloadingStrategy), string(offv1beta1.RemotePodOffloadingStrategy)),
		"namespace-mapping-strategy": Values(string(offv1beta1.DefaultNameMappingStrategy),
			string(offv1beta1.EnforceSameNameMappingStrategy), string(offv1beta1.SelectedNameMappingStrategy)),
		"server-service-type":    serviceTypes,
		"gw-server-service-type": serviceTypes,
	}
	for _, role := range []string{"local", "remote"} {
		prefix := ""
		if role == "remote" {
			prefix = "remote-"
		}
		byFlag[prefix+"context"] = kubeconfigNames(role, func(c *clientcmdapi.Config) []string { return keys(c.Contexts) })
		byFlag[prefix+"cluster"] = kubeconfigNames(role, func(c *clientcmdapi.Config) []string { return keys(c.Clusters) })
		byFlag[prefix+"user"] = kubeconfigNames(role, func(c *clientcmdapi.Config) []string { return keys(c.AuthInfos) })
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for name, f := range byFlag {
			if c.Flags().Lookup(name) != nil {
				if _, ok := c.GetFlagCompletionFunc(name); !ok {
					_ = c.RegisterFlagCompletionFunc(name, f)
				}
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// kubeconfigNames completes with names of the kubeconfig that the
// command's cluster of role reads (--kubeconfig, --remote-kubeconfig or
// $KUBECONFIG), without contacting any cluster.
func kubeconfigNames(role string, names func(*clientcmdapi.Config) []string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		c := factory.FromFlags(cmd.Flags(), role)
		if c == nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cfg, err := c.LoadKubeconfig()
		if err != nil {
			cobra.CompDebugln("reading the kubeconfig: "+err.Error(), true)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return withPrefix(names(cfg), toComplete), cobra.ShellCompDirectiveNoFileComp
	}
}

// withPrefix keeps the completions starting with toComplete.
func withPrefix(all []cobra.Completion, toComplete string) []cobra.Completion {
	out := all[:0]
	for _, c := range all {
		if strings.HasPrefix(c, toComplete) {
			out = append(out, c)
		}
	}
	return out
}

// fromCluster completes with what list reads from the command's local
// cluster, leaving out the arguments already given; nothing if the
// cluster cannot be reached within timeout.
func fromCluster(cmd *cobra.Command, args []string, toComplete string,
	list func(context.Context, client.Client) ([]cobra.Completion, error)) ([]cobra.Completion, cobra.ShellCompDirective) {
	c := factory.FromFlags(cmd.Flags(), "local")
	if c == nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx := cmd.Context()
	if ctx == nil { // a tree run by Execute rather than ExecuteContext
		ctx = context.Background()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var all []cobra.Completion
	err := c.Connect(ctx, timeout)
	if err == nil {
		all, err = list(ctx, c.Client)
	}
	if err != nil {
		cobra.CompDebugln(err.Error(), true)
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return filter(all, args, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// filter keeps the completions that start with toComplete and are not
// among the arguments already given.
func filter(all []cobra.Completion, args []string, toComplete string) []cobra.Completion {
	all = slices.DeleteFunc(all, func(comp cobra.Completion) bool {
		name, _, _ := strings.Cut(comp, "\t")
		return slices.Contains(args, name)
	})
	return withPrefix(all, toComplete)
}

// first completes the first argument only, with what list reads.
func first(cmd *cobra.Command, args []string, toComplete string,
	list func(context.Context, client.Client) ([]cobra.Completion, error)) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return fromCluster(cmd, args, toComplete, list)
}

// Namespace completes a command's one argument with the local cluster's
// namespaces.
func Namespace(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return first(cmd, args, toComplete, namespaces)
}

// namespaceFlag completes -n/--namespace with the local cluster's
// namespaces.
func namespaceFlag(cmd *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return fromCluster(cmd, nil, toComplete, namespaces)
}

// OffloadedNamespace completes a command's one argument with the local
// cluster's offloaded namespaces (those with a NamespaceOffloading).
func OffloadedNamespace(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return first(cmd, args, toComplete, offloadedNamespaces)
}

// PeerClusterIDs completes cluster IDs of the local cluster's peers (its
// ForeignClusters), each described by its role.
func PeerClusterIDs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return fromCluster(cmd, args, toComplete, peers)
}

// PeerClusterID is PeerClusterIDs for a command's one argument.
func PeerClusterID(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return first(cmd, args, toComplete, peers)
}

// ConsumerClusterIDs completes cluster IDs of the local cluster's
// consumers (its Tenants, as a provider), each described by its Tenant's
// condition (Active, Cordoned, Drained).
func ConsumerClusterIDs(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return fromCluster(cmd, args, toComplete, consumers)
}

// ConsumerClusterID is ConsumerClusterIDs for a command's one argument.
func ConsumerClusterID(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	return first(cmd, args, toComplete, consumers)
}

// ConsumerResourceSlice completes a command's one argument with the
// ResourceSlices consumers replicated to the local cluster (as a
// provider), those of --remote-cluster-id's consumer if it is given, each
// described by its consumer and whether its Quota is cordoned.
func ConsumerResourceSlice(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	consumer, _ := cmd.Flags().GetString("remote-cluster-id")
	return first(cmd, args, toComplete, func(ctx context.Context, c client.Client) ([]cobra.Completion, error) {
		return consumerSlices(ctx, c, consumer)
	})
}

// Service completes a command's one argument with the Services of the
// namespace -n names (default: "default") that can be exported (all but
// ExternalName ones), each described by its type.
func Service(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ns := objectNamespace(cmd)
	return first(cmd, args, toComplete, func(ctx context.Context, c client.Client) ([]cobra.Completion, error) {
		return services(ctx, c, ns)
	})
}

// ExportedService completes a command's one argument with the Services of
// the namespace -n names that have a ServiceExport.
func ExportedService(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	ns := objectNamespace(cmd)
	return first(cmd, args, toComplete, func(ctx context.Context, c client.Client) ([]cobra.Completion, error) {
		return exportedServices(ctx, c, ns)
	})
}

// objectNamespace is the namespace -n names on a command whose -n, as
// kubectl's, is its object's.
func objectNamespace(cmd *cobra.Command) string {
	if ns, _ := cmd.Flags().GetString("namespace"); ns != "" {
		return ns
	}
	return "default"
}

func services(ctx context.Context, c client.Client, namespace string) ([]cobra.Completion, error) {
	var l corev1.ServiceList
	if err := c.List(ctx, &l, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(l.Items))
	for i := range l.Items {
		svc := &l.Items[i]
		if svc.Spec.Type == corev1.ServiceTypeExternalName {
			continue
		}
		out = append(out, cobra.CompletionWithDesc(svc.Name, string(svc.Spec.Type)))
	}
	return out, nil
}

func exportedServices(ctx context.Context, c client.Client, namespace string) ([]cobra.Completion, error) {
	var l mcsv1beta1.ServiceExportList
	if err := c.List(ctx, &l, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, l.Items[i].Name)
	}
	return out, nil
}

func namespaces(ctx context.Context, c client.Client) ([]cobra.Completion, error) {
	var l corev1.NamespaceList
	if err := c.List(ctx, &l); err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, l.Items[i].Name)
	}
	return out, nil
}

func offloadedNamespaces(ctx context.Context, c client.Client) ([]cobra.Completion, error) {
	var l offv1beta1.NamespaceOffloadingList
	if err := c.List(ctx, &l); err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(l.Items))
	for i := range l.Items {
		out = append(out, l.Items[i].Namespace)
	}
	return out, nil
}

func peers(ctx context.Context, c client.Client) ([]cobra.Completion, error) {
	var l corev1beta1.ForeignClusterList
	if err := c.List(ctx, &l); err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(l.Items))
	for i := range l.Items {
		fc := &l.Items[i]
		out = append(out, cobra.CompletionWithDesc(string(fc.Spec.ClusterID), string(fc.Status.Role)))
	}
	return out, nil
}

func consumers(ctx context.Context, c client.Client) ([]cobra.Completion, error) {
	var l authv1beta1.TenantList
	if err := c.List(ctx, &l); err != nil {
		return nil, err
	}
	out := make([]cobra.Completion, 0, len(l.Items))
	for i := range l.Items {
		t := &l.Items[i]
		out = append(out, cobra.CompletionWithDesc(string(t.Spec.ClusterID), string(t.Spec.TenantCondition)))
	}
	return out, nil
}

// consumerSlices lists the slices consumers replicated here, those of
// consumer only if it is not empty.
func consumerSlices(ctx context.Context, c client.Client, consumer string) ([]cobra.Completion, error) {
	opts := []client.ListOption{client.MatchingLabels{consts.ReplicationLabel: "true"}}
	if consumer != "" {
		opts = append(opts, client.InNamespace(consts.TenantNamespace(consumer)))
	}
	var l authv1beta1.ResourceSliceList
	if err := c.List(ctx, &l, opts...); err != nil {
		return nil, err
	}
	var quotas offv1beta1.QuotaList
	if err := c.List(ctx, &quotas, opts[1:]...); err != nil {
		return nil, err
	}
	cordoned := map[client.ObjectKey]bool{}
	for i := range quotas.Items {
		q := &quotas.Items[i]
		cordoned[client.ObjectKeyFromObject(q)] = q.Spec.Cordoned != nil && *q.Spec.Cordoned
	}
	out := make([]cobra.Completion, 0, len(l.Items))
	for i := range l.Items {
		s := &l.Items[i]
		desc := "consumer "
		if s.Spec.ConsumerClusterID != nil {
			desc += string(*s.Spec.ConsumerClusterID)
		}
		if cordoned[client.ObjectKeyFromObject(s)] {
			desc += ", cordoned"
		}
		out = append(out, cobra.CompletionWithDesc(s.Name, desc))
	}
	return out, nil
}
