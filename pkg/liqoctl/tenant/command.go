// Package tenant implements the provider's tenant administration:
// liqoctl cordon|uncordon|drain|activate tenant CONSUMER_CLUSTER_ID. Each
// sets the Tenant's spec.tenantCondition, which the provider's controllers
// and ShadowPod webhook enforce: Cordoned starts no new pod and grants no
// more resources, Drained also evicts the consumer's pods, Active (what
// uncordon and activate set) lifts both.
package tenant

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/completion"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// verb is one of the four commands: the condition it sets and its words.
type verb struct {
	name, short, long, example string
	condition                  authv1beta1.TenantCondition
}

var verbs = []verb{
	{name: "cordon", condition: authv1beta1.TenantCordoned,
		short: "Stop a consumer from starting new pods here, keeping the ones it runs",
		long: `Cordon the Tenant of a consumer on this cluster (its provider): its running pods
stay, new ShadowPods are refused with a message naming the Tenant, and its
ResourceSlices get no more resources until it is uncordoned.`,
		example: "  liqoctl cordon tenant rome --kubeconfig ~/.kube/milan"},
	{name: "uncordon", condition: authv1beta1.TenantActive,
		short:   "Let a cordoned consumer start pods here again",
		long:    `Set the Tenant of a consumer back to Active: new pods and resource requests are accepted again.`,
		example: "  liqoctl uncordon tenant rome --kubeconfig ~/.kube/milan"},
	{name: "drain", condition: authv1beta1.TenantDrained,
		short: "Evict every pod a consumer runs here and start no new one",
		long: `Drain the Tenant of a consumer on this cluster: its pods here are evicted (each
ShadowPod deleted, with an Event; the consumer's pods show why and are
recreated where the consumer's scheduler puts them), no new one starts and no
more resources are granted until the Tenant is activated again. With --wait
(the default) the command returns once the consumer runs no pod here.`,
		example: "  liqoctl drain tenant rome --kubeconfig ~/.kube/milan --timeout 2m"},
	{name: "activate", condition: authv1beta1.TenantActive,
		short:   "Set a consumer's Tenant Active again, after a cordon or a drain",
		long:    `Set the Tenant of a consumer back to Active: new pods and resource requests are accepted again.`,
		example: "  liqoctl activate tenant rome --kubeconfig ~/.kube/milan"},
}

// NewCommands returns liqoctl cordon, uncordon, drain and activate, each
// with its tenant subcommand.
func NewCommands() []*cobra.Command {
	out := make([]*cobra.Command, 0, len(verbs))
	for _, v := range verbs {
		parent := &cobra.Command{Use: v.name, Short: v.short, Long: v.long, Example: v.example, Args: cobra.NoArgs}
		parent.AddCommand(newTenantCommand(v))
		out = append(out, parent)
	}
	return out
}

// options of one tenant command.
type options struct {
	cluster factory.Cluster
	timeout time.Duration
	wait    bool
}

func newTenantCommand(v verb) *cobra.Command {
	o := &options{}
	cmd := &cobra.Command{
		Use:               "tenant CONSUMER_CLUSTER_ID",
		Short:             v.short,
		Long:              v.long,
		Example:           v.example,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completion.ConsumerClusterID,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			return o.run(ctx, &output.Printer{W: cmd.OutOrStdout()}, v, args[0])
		},
	}
	o.cluster.AddLocalFlags(cmd.Flags())
	cmd.Flags().DurationVar(&o.timeout, "timeout", 2*time.Minute, "give up after this long")
	if v.condition == authv1beta1.TenantDrained {
		cmd.Flags().BoolVar(&o.wait, "wait", true, "wait until the consumer runs no pod on this cluster")
	}
	return cmd
}

func (o *options) run(ctx context.Context, out *output.Printer, v verb, consumer string) error {
	if err := o.cluster.Connect(ctx, 10*time.Second); err != nil {
		return err
	}
	c := o.cluster.Client
	ns := consts.TenantNamespace(consumer)
	var tenants authv1beta1.TenantList
	if err := c.List(ctx, &tenants, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing the Tenants in %s: %w", ns, err)
	}
	found := 0
	for i := range tenants.Items {
		t := &tenants.Items[i]
		if string(t.Spec.ClusterID) != consumer {
			continue
		}
		found++
		if t.Spec.TenantCondition == v.condition {
			out.Step("Tenant %s/%s of consumer %s is already %s", t.Namespace, t.Name, consumer, v.condition)
			continue
		}
		patch := client.MergeFrom(t.DeepCopy())
		t.Spec.TenantCondition = v.condition
		if err := c.Patch(ctx, t, patch); err != nil {
			return fmt.Errorf("setting Tenant %s/%s %s: %w", t.Namespace, t.Name, v.condition, err)
		}
		out.Step("Tenant %s/%s of consumer %s is now %s", t.Namespace, t.Name, consumer, v.condition)
	}
	if found == 0 {
		return fmt.Errorf("consumer %s has no Tenant on this cluster (namespace %s): is it peered with this cluster as its provider?", consumer, ns)
	}
	if v.condition != authv1beta1.TenantDrained || !o.wait {
		return nil
	}
	out.Step("Waiting for the pods of consumer %s to be evicted", consumer)
	var left int
	err := wait.PollUntilContextCancel(ctx, time.Second, true, func(ctx context.Context) (bool, error) {
		var pods offv1beta1.ShadowPodList
		if err := c.List(ctx, &pods, client.MatchingLabels{consts.OriginClusterIDLabel: consumer}); err != nil {
			return false, err
		}
		left = len(pods.Items)
		return left == 0, nil
	})
	if err != nil {
		return fmt.Errorf("%d pods of consumer %s still here: %w", left, consumer, err)
	}
	out.Step("Consumer %s runs no pod on this cluster", consumer)
	return nil
}
