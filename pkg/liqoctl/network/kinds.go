package network

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
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
