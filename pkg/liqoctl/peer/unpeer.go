package peer

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	kwait "k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/factory"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
	"github.com/liqo-go/liqo/pkg/liqoctl/peeringuser"
	"github.com/liqo-go/liqo/pkg/liqoctl/volumes"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/peering/netsetup"
	"github.com/liqo-go/liqo/pkg/wait"
)

// UnpeerOptions of liqoctl unpeer.
type UnpeerOptions struct {
	Local, Remote factory.Cluster
	Timeout       time.Duration
	// DeleteRemoteVolumes lets the unpeering delete the storage fabric's
	// volumes on the provider.
	DeleteRemoteVolumes bool
	// Wait for the virtual nodes (and, with DeleteNamespaces, the tenant
	// namespaces) to be gone.
	Wait bool
	// DeleteNamespaces deletes the tenant namespaces too, once emptied of
	// the peering (--delete-namespaces); by default they are kept.
	DeleteNamespaces bool
	out              *output.Printer
	// remoteID, if known, names the peering when the remote cluster
	// cannot be reached.
	remoteID string
	// localOnly does not contact the remote cluster at all (force unpeer).
	localOnly bool
	// name, when set (liqoctl unpeer NAME), is the remote cluster's ID.
	name string
}

// NewUnpeerCommand returns liqoctl unpeer.
func NewUnpeerCommand() *cobra.Command {
	o := &UnpeerOptions{}
	cmd := &cobra.Command{
		Use:   "unpeer [NAME]",
		Short: "Tear down the peering of the local cluster (consumer) with a remote cluster (provider)",
		Long: `Tear down the peering in which the local cluster consumes resources of a
remote cluster: the virtual node, the ResourceSlice, the Identity and the
Tenant are removed, and the network fabric and the offloading map in the
tenant namespaces on both sides. The namespaces themselves are kept,
holding no peering (no ForeignCluster, nothing in liqoctl info): a later
liqoctl peer of the same clusters uses them again. --delete-namespaces
deletes them too. A tenant namespace the reverse peering still uses, or a
peering user holds (liqoctl delete peering-user removes it), is left as it
is, the fabric with it. While PVCs have their volumes on the
provider (the liqo StorageClass), the command refuses, naming them, unless
--delete-remote-volumes is given.

If the remote cluster cannot be reached, the local side is still cleaned up
within --timeout, and the command lists what it could not remove remotely.

NAME, as in the v0.5 manual's "liqoctl --context=provider unpeer consumer",
names the remote cluster by its cluster ID: without a --remote- flag, it is
reached through the context of that name in the kubeconfig, else, for a
peering made with liqoctl peer out-of-band, as unpeer out-of-band NAME does.
The reverse peering, if any, is kept.`,
		Example: `  liqoctl unpeer --remote-kubeconfig ~/.kube/milan
  liqoctl unpeer --context rome --remote-context milan
  liqoctl --context=provider unpeer consumer
  liqoctl unpeer --remote-kubeconfig ~/.kube/milan --delete-namespaces`,
		Args: remoteOrName,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.out = &output.Printer{W: cmd.OutOrStdout()}
			ctx, cancel := context.WithTimeout(cmd.Context(), o.Timeout)
			defer cancel()
			if len(args) == 1 {
				return o.runByName(ctx, cmd, args[0])
			}
			return o.Run(ctx)
		},
	}
	fs := cmd.Flags()
	o.addFlags(fs)
	o.Remote.AddRemoteFlags(fs, &o.Local)
	cmd.AddCommand(newUnpeerOutOfBandCommand(), newUnpeerInBandCommand())
	return cmd
}

// addFlags binds the flags every unpeer command has: the local cluster's,
// the timeout, and the permission to delete remote volumes.
func (o *UnpeerOptions) addFlags(fs *pflag.FlagSet) {
	o.Local.AddLocalFlags(fs)
	fs.DurationVar(&o.Timeout, "timeout", 2*time.Minute, "give up after this long")
	fs.BoolVar(&o.DeleteRemoteVolumes, volumes.Flag, false, "unpeer even though PVCs have their volumes on the remote cluster, deleting their data")
	fs.BoolVar(&o.Wait, "wait", true, "wait until the virtual nodes (and the tenant namespaces, with --delete-namespaces) are gone")
	fs.BoolVar(&o.DeleteNamespaces, "delete-namespaces", false, "also delete the tenant namespaces on both sides (by default they are kept, emptied of the peering)")
}

// Run unpeers: local first, so that the consumer stops using the provider
// even if the provider is gone for good.
func (o *UnpeerOptions) Run(ctx context.Context) error {
	if err := o.Local.Connect(ctx, min(o.Timeout/4, 10*time.Second)); err != nil {
		return err
	}
	local, err := o.Local.FindComponents(ctx)
	if err != nil {
		return err
	}
	var remote *factory.ClusterInfo
	remoteErr := errors.New("not contacted (force unpeer)")
	if !o.localOnly {
		remoteErr = o.Remote.Connect(ctx, min(o.Timeout/4, 5*time.Second))
		if errors.Is(remoteErr, factory.ErrNoRemote) && o.remoteID == "" {
			return remoteErr
		}
		if remoteErr == nil {
			remote, remoteErr = o.Remote.FindComponents(ctx)
		}
	}
	var remoteID string
	switch {
	case remote != nil:
		remoteID = remote.ID
		if err := checkName(o.name, remoteID); err != nil {
			return err
		}
	case o.localOnly:
		remoteID = o.remoteID
		o.out.Warn("force unpeer: the remote cluster %s is not contacted; cleaning up the local side only", remoteID)
	case o.remoteID != "":
		remoteID = o.remoteID
		o.out.Warn("the remote cluster cannot be reached (%v); cleaning up the local side only", remoteErr)
	default:
		// The provider is unreachable: the kubeconfig still tells which
		// peering to remove if exactly one local peering matches its server.
		if remoteID, err = o.guessRemoteID(ctx); err != nil {
			return fmt.Errorf("%w; and the remote cluster cannot be reached: %v", err, remoteErr)
		}
		o.out.Warn("the remote cluster cannot be reached (%v); cleaning up the local side only", remoteErr)
	}
	localNS := consts.TenantNamespace(remoteID)
	if !o.DeleteRemoteVolumes {
		remote, err := volumes.Remote(ctx, o.Local.Client, func(_, provider string) bool { return provider == remoteID })
		if err != nil {
			return err
		}
		if len(remote) > 0 {
			return volumes.Refuse("unpeering from "+remoteID, remote)
		}
	}

	// An out-of-band request goes before anything: the controller manager
	// would otherwise perform it again.
	if err := withdrawOutOfBand(ctx, o.Local.Client, remoteID); err != nil {
		return err
	}
	// The slice goes first: it owns the VirtualNode, which would otherwise be
	// created again while the slice is still accepted.
	o.out.Step("Removing the ResourceSlice and the virtual node")
	if err := o.removeResourceSlices(ctx, localNS, local.ID); err != nil {
		return err
	}
	if err := o.removeVirtualNodes(ctx, localNS); err != nil {
		return err
	}
	o.out.Info("ResourceSlice and virtual node removed")

	o.out.Step("Removing the Identity")
	if err := peering.RemoveIdentity(ctx, o.Local.Client, remoteID); err != nil {
		return err
	}
	o.out.Info("Identity removed")

	var leftRemote []string
	if remote != nil {
		o.out.Step("Removing the Tenant on the provider")
		leftRemote = o.cleanRemote(ctx, local.ID)
		if len(leftRemote) == 0 {
			o.out.Info("Tenant removed")
		}
	} else {
		leftRemote = []string{fmt.Sprintf("the Tenant, ResourceSlices, Quotas and network fabric of %s in namespace %s on %s",
			local.ID, consts.TenantNamespace(local.ID), remoteID)}
	}

	o.out.Step("Clearing the local tenant namespace")
	if err := o.settleTenantNamespace(ctx, o.Local.Client, localNS, remoteID); err != nil {
		return err
	}
	if len(leftRemote) > 0 {
		for _, l := range leftRemote {
			o.out.Warn("not removed on the remote cluster: %s", l)
		}
		if o.localOnly {
			o.out.Info("Unpeered locally from %s; if it ever comes back, its administrator removes what is left there", remoteID)
		} else {
			o.out.Info("Unpeered locally; run unpeer again when the remote cluster is reachable to clean it up")
		}
		return nil
	}
	o.out.Info("Unpeered from %s", remoteID)
	return nil
}

// removeResourceSlices deletes the consumer's ResourceSlices in its tenant
// namespace of the provider: the one liqoctl peer made and those of
// liqoctl create resourceslice. Replicas of the reverse peering's slices
// share the namespace and stay.
func (o *UnpeerOptions) removeResourceSlices(ctx context.Context, ns, localID string) error {
	var slices authv1beta1.ResourceSliceList
	if err := o.Local.Client.List(ctx, &slices, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing the ResourceSlices in %s: %w", ns, err)
	}
	for i := range slices.Items {
		s := &slices.Items[i]
		if s.Labels[consts.ReplicationLabel] != "" || s.Spec.ConsumerClusterID == nil || string(*s.Spec.ConsumerClusterID) != localID {
			continue
		}
		if err := client.IgnoreNotFound(o.Local.Client.Delete(ctx, s)); err != nil {
			return fmt.Errorf("deleting ResourceSlice %s/%s: %w", ns, s.Name, err)
		}
	}
	return nil
}

// guessRemoteID finds the peering whose Identity points at the remote
// kubeconfig's API server.
func (o *UnpeerOptions) guessRemoteID(ctx context.Context) (string, error) {
	if o.Remote.Config == nil {
		return "", errors.New("cannot load the remote kubeconfig")
	}
	var fcs corev1beta1.ForeignClusterList
	if err := o.Local.Client.List(ctx, &fcs); err != nil {
		return "", err
	}
	var match []string
	for _, fc := range fcs.Items {
		if fc.Status.APIServerURL == o.Remote.Config.Host {
			match = append(match, fc.Name)
		}
	}
	if len(match) != 1 {
		return "", fmt.Errorf("cannot tell which peering the remote kubeconfig (%s) belongs to: %d peerings use that server", o.Remote.Config.Host, len(match))
	}
	return match[0], nil
}

// removeVirtualNodes deletes the VirtualNodes of the peering and waits until
// none is left and their Nodes are gone. A VirtualNode may still appear
// after the first delete (the controller can recreate one from a slice it
// has not yet seen deleted; the garbage collector removes it since its slice
// is gone), so the namespace is listed again each round. If the controller
// does not finish within half the remaining time (it may be down), the
// Nodes are removed here and the finalizers dropped: unpeer never hangs.
func (o *UnpeerOptions) removeVirtualNodes(ctx context.Context, ns string) error {
	grace := time.Until(deadline(ctx)) / 2
	nodes := map[string]bool{}
	var vns offv1beta1.VirtualNodeList
	var left []string
	// The requests run on ctx: grace only bounds how long the controller
	// is given before the removal is forced.
	err := kwait.PollUntilContextTimeout(ctx, wait.PollInterval, grace, true, func(context.Context) (bool, error) {
		vns = offv1beta1.VirtualNodeList{}
		if err := o.Local.Client.List(ctx, &vns, client.InNamespace(ns)); err != nil {
			return false, err
		}
		for i := range vns.Items {
			vn := &vns.Items[i]
			nodes[vn.Name] = true
			if vn.DeletionTimestamp.IsZero() {
				if err := client.IgnoreNotFound(o.Local.Client.Delete(ctx, vn)); err != nil {
					return false, err
				}
			}
		}
		if !o.Wait {
			return true, nil
		}
		var err error
		if left, err = o.existingNodes(ctx, nodes); err != nil {
			return false, err
		}
		return len(vns.Items) == 0 && len(left) == 0, nil
	})
	if err != nil && ctx.Err() == nil && kwait.Interrupted(err) {
		return o.forceRemove(ctx, vns.Items, left)
	}
	return err
}

// existingNodes returns the names among names whose Node still exists.
func (o *UnpeerOptions) existingNodes(ctx context.Context, names map[string]bool) ([]string, error) {
	var left []string
	for name := range names {
		err := o.Local.Client.Get(ctx, types.NamespacedName{Name: name}, &corev1.Node{})
		switch {
		case err == nil:
			left = append(left, name)
		case !apierrors.IsNotFound(err):
			return nil, err
		}
	}
	return left, nil
}

// forceRemove does the controller's part: delete the Nodes, drop the
// VirtualNodes' finalizers.
func (o *UnpeerOptions) forceRemove(ctx context.Context, vns []offv1beta1.VirtualNode, nodes []string) error {
	for _, name := range nodes {
		o.out.Warn("the controller did not remove virtual node %s in time; removing it directly", name)
		if err := client.IgnoreNotFound(o.Local.Client.Delete(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})); err != nil {
			return err
		}
	}
	for i := range vns {
		vns[i].Finalizers = nil
		if err := client.IgnoreNotFound(o.Local.Client.Update(ctx, &vns[i])); err != nil {
			return err
		}
	}
	return nil
}

func deadline(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Minute)
}

// cleanRemote removes the consumer's objects on the provider and returns what
// it could not remove.
func (o *UnpeerOptions) cleanRemote(ctx context.Context, localID string) []string {
	ns := consts.TenantNamespace(localID)
	var left []string
	var slices authv1beta1.ResourceSliceList
	if err := o.Remote.Client.List(ctx, &slices, client.InNamespace(ns),
		client.MatchingLabels{consts.OriginClusterIDLabel: localID}); err != nil && !apierrors.IsNotFound(err) {
		left = append(left, fmt.Sprintf("ResourceSlices in %s: %v", ns, err))
	}
	for i := range slices.Items {
		if err := o.Remote.Client.Delete(ctx, &slices.Items[i]); client.IgnoreNotFound(err) != nil {
			left = append(left, fmt.Sprintf("ResourceSlice %s/%s: %v", ns, slices.Items[i].Name, err))
		}
	}
	left = append(left, peering.RemoveTenant(ctx, o.Remote.Client, localID)...)
	if err := o.settleTenantNamespace(ctx, o.Remote.Client, ns, localID); err != nil {
		left = append(left, err.Error())
	}
	return left
}

// settleTenantNamespace ends what the peering with peer keeps in its
// tenant namespace ns on one cluster (c), once the slices, virtual nodes,
// Identity and Tenant are gone. If the reverse peering still lives there
// (a Tenant for, or an Identity towards, the same peer), nothing more goes:
// the network fabric is shared; nor if a peering user holds it (liqoctl
// delete peering-user removes it with all it holds). Otherwise the fabric
// and this cluster's own NamespaceMaps go (a provider's replicas of the
// consumer's maps go with its Tenant, and its twin namespaces with them),
// so that the namespace holds no peering; it is then kept, or with
// --delete-namespaces deleted.
func (o *UnpeerOptions) settleTenantNamespace(ctx context.Context, c client.Client, ns, peer string) error {
	n := &corev1.Namespace{}
	if err := c.Get(ctx, types.NamespacedName{Name: ns}, n); err != nil {
		return client.IgnoreNotFound(err)
	}
	var tenants authv1beta1.TenantList
	var ids authv1beta1.IdentityList
	if err := c.List(ctx, &tenants, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing Tenants in %s: %w", ns, err)
	}
	if err := c.List(ctx, &ids, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing Identities in %s: %w", ns, err)
	}
	if len(tenants.Items)+len(ids.Items) > 0 {
		o.out.Info("Namespace %s kept as it is: the reverse peering with %s uses it", ns, peer)
		return nil
	}
	if user := n.Labels[peeringuser.Label]; user != "" {
		// A peering user needs it to peer again, and may not touch the
		// fabric there (nor should it: liqoctl delete peering-user removes
		// the namespace with all it holds).
		o.out.Info("Namespace %s kept for peering user %s", ns, peeringuser.Name(user))
		return nil
	}
	if err := netsetup.RemoveFabric(ctx, c, ns, peer, true); err != nil {
		return fmt.Errorf("removing the network fabric with %s: %w", peer, err)
	}
	var maps offv1beta1.NamespaceMapList
	if err := c.List(ctx, &maps, client.InNamespace(ns)); err != nil {
		return fmt.Errorf("listing NamespaceMaps in %s: %w", ns, err)
	}
	for i := range maps.Items {
		if m := &maps.Items[i]; m.Labels[consts.ReplicationLabel] == "" {
			if err := client.IgnoreNotFound(c.Delete(ctx, m)); err != nil {
				return fmt.Errorf("deleting NamespaceMap %s/%s: %w", ns, m.Name, err)
			}
		}
	}
	if !o.DeleteNamespaces {
		o.out.Info("Namespace %s kept, holding no peering (--delete-namespaces deletes it)", ns)
		return nil
	}
	if err := c.Delete(ctx, n); err != nil {
		return client.IgnoreNotFound(err)
	}
	if o.Wait {
		// Wait for it to go, so that a peer right after does not find it terminating.
		if err := wait.Gone(ctx, c, types.NamespacedName{Name: ns}, n, "namespace "+ns); err != nil {
			return err
		}
	}
	o.out.Info("Namespace %s deleted", ns)
	return nil
}
