// Package tenant implements the provider's tenant administration:
// liqoctl cordon|uncordon|drain|activate tenant CONSUMER_CLUSTER_ID. Each
// sets the Tenant's spec.tenantCondition, which the provider's controllers
// and ShadowPod webhook enforce: Cordoned starts no new pod and grants no
// more resources, Drained also evicts the consumer's pods, Active (what
// uncordon and activate set) lifts both. liqoctl cordon|uncordon
// resourceslice NAME --remote-cluster-id CONSUMER does the same for one
// slice of a consumer: it sets the spec.cordoned of the slice's Quota.
package tenant

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/completion"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// verb is one of the four commands: the condition it sets on a Tenant, the
// cordon it sets on a slice (cordon and uncordon only), and its words.
type verb struct {
	name, short, long, example string
	condition                  authv1beta1.TenantCondition
	slice                      *sliceVerb
}

// sliceVerb is what a verb does to one ResourceSlice.
type sliceVerb struct {
	cordoned             bool
	short, long, example string
}

var verbs = []verb{
	{name: "cordon", condition: authv1beta1.TenantCordoned,
		short: "Stop a consumer from starting new pods here, keeping the ones it runs",
		long: `Cordon the Tenant of a consumer on this cluster (its provider): its running pods
stay, new ShadowPods are refused with a message naming the Tenant, and its
ResourceSlices get no more resources until it is uncordoned.`,
		example: "  liqoctl cordon tenant rome --kubeconfig ~/.kube/milan",
		slice: &sliceVerb{cordoned: true,
			short: "Stop a consumer's new pods from using one of its ResourceSlices here",
			long: `Cordon one ResourceSlice of a consumer on this cluster (its provider): the
pods running on its grant stay, but new ShadowPods may not use it (they are
refused naming the slice when the consumer has no other open slice here, or
when the open ones are full), and a changed request on it is not decided until
it is uncordoned. The consumer sees it in the slice's Resources condition
(reason Cordoned). The mark is the spec.cordoned of the slice's Quota, which
the consumer can read but not change; a slice whose resources were never
granted has no Quota, and nothing to cordon.`,
			example: "  liqoctl cordon resourceslice pool --remote-cluster-id rome --kubeconfig ~/.kube/milan"}},
	{name: "uncordon", condition: authv1beta1.TenantActive,
		short:   "Let a cordoned consumer start pods here again",
		long:    `Set the Tenant of a consumer back to Active: new pods and resource requests are accepted again.`,
		example: "  liqoctl uncordon tenant rome --kubeconfig ~/.kube/milan",
		slice: &sliceVerb{cordoned: false,
			short: "Let a consumer's new pods use a cordoned ResourceSlice again",
			long: `Uncordon one ResourceSlice of a consumer on this cluster: new ShadowPods may
use its grant again, and a request changed while it was cordoned is decided.`,
			example: "  liqoctl uncordon resourceslice pool --remote-cluster-id rome --kubeconfig ~/.kube/milan"}},
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
// with its tenant subcommand, and cordon and uncordon with their
// resourceslice one.
func NewCommands() []*cobra.Command {
	out := make([]*cobra.Command, 0, len(verbs))
	for _, v := range verbs {
		parent := &cobra.Command{Use: v.name, Short: v.short, Long: v.long, Example: v.example, Args: cobra.NoArgs}
		if v.slice != nil {
			parent.Example += "\n" + v.slice.example
		}
		parent.AddCommand(newTenantCommand(v))
		if v.slice != nil {
			parent.AddCommand(newSliceCommand(v.slice))
		}
		out = append(out, parent)
	}
	return out
}

// options of one tenant or resourceslice command.
type options struct {
	cluster  factory.Cluster
	timeout  time.Duration
	wait     bool
	consumer string
}

// newCommand is the command of one verb on one kind of object: it binds
// the cluster's flags and --timeout, and runs do with the cluster
// connected, under the timeout.
func newCommand(o *options, use, short, long, example string, args cobra.PositionalArgs, complete cobra.CompletionFunc,
	do func(ctx context.Context, out *output.Printer, args []string) error) *cobra.Command {
	cmd := &cobra.Command{
		Use: use, Short: short, Long: long, Example: example, Args: args,
		ValidArgsFunction: complete,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), o.timeout)
			defer cancel()
			if err := o.cluster.Connect(ctx, min(o.timeout, 10*time.Second)); err != nil {
				return err
			}
			return do(ctx, &output.Printer{W: cmd.OutOrStdout()}, args)
		},
	}
	o.cluster.AddLocalFlags(cmd.Flags())
	cmd.Flags().DurationVar(&o.timeout, "timeout", 2*time.Minute, "give up after this long")
	return cmd
}

func newTenantCommand(v verb) *cobra.Command {
	o := &options{}
	cmd := newCommand(o, "tenant CONSUMER_CLUSTER_ID", v.short, v.long, v.example, cobra.ExactArgs(1), completion.ConsumerClusterID,
		func(ctx context.Context, out *output.Printer, args []string) error {
			return o.run(ctx, out, v, args[0])
		})
	if v.condition == authv1beta1.TenantDrained {
		cmd.Flags().BoolVar(&o.wait, "wait", true, "wait until the consumer runs no pod on this cluster")
	}
	return cmd
}

func newSliceCommand(v *sliceVerb) *cobra.Command {
	o := &options{}
	// A malformed ID is a usage error, as a wrong argument is (cobra's
	// required-flag check, which comes later, reports a missing one).
	args := func(cmd *cobra.Command, args []string) error {
		if err := cobra.ExactArgs(1)(cmd, args); err != nil {
			return err
		}
		if o.consumer == "" {
			return nil
		}
		if err := consts.ValidateClusterID(o.consumer); err != nil {
			return fmt.Errorf("--remote-cluster-id: %w", err)
		}
		return nil
	}
	cmd := newCommand(o, "resourceslice NAME", v.short, v.long, v.example, args, completion.ConsumerResourceSlice,
		func(ctx context.Context, out *output.Printer, args []string) error {
			return o.cordonSlice(ctx, out, v.cordoned, args[0])
		})
	cmd.Flags().StringVar(&o.consumer, "remote-cluster-id", "", "cluster ID of the consumer whose ResourceSlice it is")
	_ = cmd.MarkFlagRequired("remote-cluster-id")
	// The consumers' IDs, as for the tenant commands: this runs on the
	// provider.
	_ = cmd.RegisterFlagCompletionFunc("remote-cluster-id", completion.ConsumerClusterIDs)
	return cmd
}

// cordonSlice sets the spec.cordoned of the Quota of the consumer's slice
// name, which the provider's ShadowPod webhook and slice controller
// enforce. The Quota holds the mark because the consumer cannot write it.
func (o *options) cordonSlice(ctx context.Context, out *output.Printer, cordoned bool, name string) error {
	c := o.cluster.Client
	ns := consts.TenantNamespace(o.consumer)
	var s authv1beta1.ResourceSlice
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &s); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("consumer %s has no ResourceSlice %s on this cluster (namespace %s): liqoctl info on the consumer lists its slices", o.consumer, name, ns)
		}
		return fmt.Errorf("reading ResourceSlice %s/%s: %w", ns, name, err)
	}
	var q offv1beta1.Quota
	if err := c.Get(ctx, types.NamespacedName{Namespace: ns, Name: name}, &q); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("ResourceSlice %s/%s of consumer %s has no Quota: its resources are not granted (%s), so there is nothing to cordon",
				ns, name, o.consumer, resourcesState(&s))
		}
		return fmt.Errorf("reading Quota %s/%s: %w", ns, name, err)
	}
	state := map[bool]string{true: "cordoned", false: "uncordoned"}[cordoned]
	if (q.Spec.Cordoned != nil && *q.Spec.Cordoned) == cordoned {
		out.Step("ResourceSlice %s/%s of consumer %s is already %s", ns, name, o.consumer, state)
		return nil
	}
	patch := client.MergeFrom(q.DeepCopy())
	q.Spec.Cordoned = &cordoned
	if err := c.Patch(ctx, &q, patch); err != nil {
		return fmt.Errorf("setting spec.cordoned of Quota %s/%s: %w", ns, name, err)
	}
	out.Step("ResourceSlice %s/%s of consumer %s is now %s (Quota spec.cordoned: %t)", ns, name, o.consumer, state, cordoned)
	return nil
}

// resourcesState says what the provider answered a slice's request.
func resourcesState(s *authv1beta1.ResourceSlice) string {
	for _, c := range s.Status.Conditions {
		if c.Type == authv1beta1.ResourceSliceResources {
			return fmt.Sprintf("Resources condition %s: %s", c.Status, c.Message)
		}
	}
	return "not decided yet"
}

func (o *options) run(ctx context.Context, out *output.Printer, v verb, consumer string) error {
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
