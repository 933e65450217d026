package network

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/output"
)

// fabricKind is one kind of the network fabric's objects, as the manual
// commands find and delete them.
type fabricKind struct {
	use, kind string
	newObj    func() client.Object
	newList   func() client.ObjectList
	// secretRef, for the gateways, is the key Secret their status names.
	secretRef func(client.Object) *corev1.ObjectReference
}

var (
	serverKind = fabricKind{"gatewayserver", "GatewayServer",
		func() client.Object { return &netv1beta1.GatewayServer{} }, func() client.ObjectList { return &netv1beta1.GatewayServerList{} },
		func(o client.Object) *corev1.ObjectReference { return o.(*netv1beta1.GatewayServer).Status.SecretRef }}
	clientKind = fabricKind{"gatewayclient", "GatewayClient",
		func() client.Object { return &netv1beta1.GatewayClient{} }, func() client.ObjectList { return &netv1beta1.GatewayClientList{} },
		func(o client.Object) *corev1.ObjectReference { return o.(*netv1beta1.GatewayClient).Status.SecretRef }}
	configurationKind = fabricKind{"configuration", "Configuration",
		func() client.Object { return &netv1beta1.Configuration{} }, func() client.ObjectList { return &netv1beta1.ConfigurationList{} }, nil}
	publicKeyKind = fabricKind{"publickey", "PublicKey",
		func() client.Object { return &netv1beta1.PublicKey{} }, func() client.ObjectList { return &netv1beta1.PublicKeyList{} }, nil}
)

// gatewayKinds are the gateways by generate publickey's --gateway-type.
var gatewayKinds = map[string]fabricKind{"server": serverKind, "client": clientKind}

// find returns the object of kind k named name: in the tenant namespace of
// remoteID if given, else in whichever tenant namespace holds one (and an
// error naming them if several do).
func find(ctx context.Context, c client.Client, k fabricKind, name, remoteID string) (client.Object, error) {
	if remoteID != "" {
		obj := k.newObj()
		key := types.NamespacedName{Namespace: consts.TenantNamespace(remoteID), Name: name}
		switch err := c.Get(ctx, key, obj); {
		case apierrors.IsNotFound(err):
			return nil, fmt.Errorf("no %s %s in the tenant namespace of %s (%s)", k.kind, name, remoteID, key.Namespace)
		case err != nil:
			return nil, fmt.Errorf("reading %s %s: %w", k.kind, key, err)
		}
		return obj, nil
	}
	list := k.newList()
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing the %ss: %w", k.kind, err)
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return nil, err
	}
	var found []client.Object
	var where []string
	for _, item := range items {
		obj := item.(client.Object)
		if _, tenant := consts.ClusterIDOfTenantNamespace(obj.GetNamespace()); tenant && obj.GetName() == name {
			found = append(found, obj)
			where = append(where, obj.GetNamespace())
		}
	}
	switch len(found) {
	case 0:
		return nil, fmt.Errorf("no %s named %s in any tenant namespace", k.kind, name)
	case 1:
		return found[0], nil
	}
	return nil, fmt.Errorf("%ss named %s are in several tenant namespaces (%s): give --remote-cluster-id", k.kind, name, strings.Join(where, ", "))
}

// NewDeleteCommands returns the subcommands of liqoctl delete removing the
// network fabric's objects one at a time.
func NewDeleteCommands() []*cobra.Command {
	var out []*cobra.Command
	for _, k := range []fabricKind{configurationKind, serverKind, clientKind, publicKeyKind} {
		out = append(out, newDelete(k))
	}
	return out
}

// deleteEffect says what deleting an object of each kind undoes.
var deleteEffect = map[string]string{
	"configuration": "this cluster forgets the peer's CIDRs and releases their remapping (a later Configuration may remap them elsewhere)",
	"gatewayserver": "the gateway server, its pod and Service go, and the tunnel through it with them",
	"gatewayclient": "the gateway client and its pod go, and the tunnel through it with them",
	"publickey":     "this cluster's gateway for the peer stops accepting the peer gateway's key, and the tunnel stops",
}

func newDelete(k fabricKind) *cobra.Command {
	m := &manual{}
	cmd := &cobra.Command{
		Use:   k.use + " NAME",
		Short: "Delete a " + k.kind + " made with liqoctl create " + k.use + " (manual network fabric)",
		Long: `Delete the ` + k.kind + ` NAME of this cluster: ` + deleteEffect[k.use] + `.
It is looked for in the tenant namespace of --remote-cluster-id, or without
the flag in whichever tenant namespace holds one of that name. liqoctl
network disconnect and reset delete the whole fabric with a peer on both
clusters.`,
		Example: `  liqoctl delete ` + k.use + ` milan
  liqoctl delete ` + k.use + ` milan --remote-cluster-id milan --kubeconfig ~/.kube/rome`,
		Args: cobra.ExactArgs(1),
	}
	fs := cmd.Flags()
	m.cluster.AddLocalFlags(fs)
	fs.StringVar(&m.remoteID, "remote-cluster-id", "", "cluster ID of the peer, whose tenant namespace holds the object (default: any)")
	fs.DurationVar(&m.timeout, "timeout", time.Minute, "give up after this long")
	cmd.RunE = m.runE(func(ctx context.Context, cmd *cobra.Command, args []string, s *side) error {
		obj, err := find(ctx, s.c.Client, k, args[0], m.remoteID)
		if err != nil {
			return err
		}
		if err := client.IgnoreNotFound(s.c.Client.Delete(ctx, obj)); err != nil {
			return fmt.Errorf("deleting %s %s/%s: %w", k.kind, obj.GetNamespace(), obj.GetName(), err)
		}
		(&output.Printer{W: cmd.OutOrStdout()}).Info("%s %s/%s deleted", k.kind, obj.GetNamespace(), obj.GetName())
		return nil
	})
	return cmd
}
