package gateway

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// kind is one of the two gateway kinds, as the reconciler sees it.
type kind interface {
	new() client.Object
	mode() Mode
	describe(client.Object) desc
	// status is the object's status to fill.
	status(client.Object) *status
}

// status is the part of both kinds' status the reconciler writes; each kind
// copies it into its own status type.
type status struct {
	ref, secretRef   **corev1.ObjectReference
	internalEndpoint **netv1beta1.InternalGatewayEndpoint
	endpoint         **netv1beta1.EndpointStatus // server only
	conditions       *[]metav1.Condition
}

type serverKind struct{}

func (serverKind) new() client.Object { return &netv1beta1.GatewayServer{} }
func (serverKind) mode() Mode         { return Server }
func (serverKind) describe(o client.Object) desc {
	g := o.(*netv1beta1.GatewayServer)
	d := base(o, "GatewayServer", Server, g.Spec.MTU, g.Spec.SecretRef.Name)
	d.Endpoint = g.Spec.Endpoint
	return d
}
func (serverKind) status(o client.Object) *status {
	g := o.(*netv1beta1.GatewayServer)
	return &status{ref: &g.Status.ServerRef, secretRef: &g.Status.SecretRef, internalEndpoint: &g.Status.InternalEndpoint,
		endpoint: &g.Status.Endpoint, conditions: &g.Status.Conditions}
}

type clientKind struct{}

func (clientKind) new() client.Object { return &netv1beta1.GatewayClient{} }
func (clientKind) mode() Mode         { return Client }
func (clientKind) describe(o client.Object) desc {
	g := o.(*netv1beta1.GatewayClient)
	d := base(o, "GatewayClient", Client, g.Spec.MTU, g.Spec.SecretRef.Name)
	d.Dial = g.Spec.Endpoint
	return d
}
func (clientKind) status(o client.Object) *status {
	g := o.(*netv1beta1.GatewayClient)
	return &status{ref: &g.Status.ClientRef, secretRef: &g.Status.SecretRef, internalEndpoint: &g.Status.InternalEndpoint,
		conditions: &g.Status.Conditions}
}

// base is the part of desc both kinds fill the same way. The remote
// cluster comes from the usual label, else from the tenant namespace's
// name.
func base(o client.Object, k string, m Mode, mtu int32, secret string) desc {
	d := desc{Mode: m, Name: o.GetName(), Namespace: o.GetNamespace(), UID: o.GetUID(), Kind: k, MTU: mtu,
		RemoteClusterID: o.GetLabels()[consts.RemoteClusterIDLabel], SecretName: secret}
	if d.RemoteClusterID == "" {
		d.RemoteClusterID, _ = consts.ClusterIDOfTenantNamespace(o.GetNamespace())
	}
	if d.SecretName == "" {
		d.SecretName, d.OwnSecret = consts.GatewayResourceName(d.Name), true
	}
	return d
}
