// Package foreigncluster keeps one ForeignCluster per peer, summarising from
// the peering's objects which role the peer plays and how each module
// (authentication, offloading, networking) is doing.
package foreigncluster

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

// Summaries shown in the printcolumns and by liqoctl info.
const (
	Healthy   = "Healthy"
	Unhealthy = "Unhealthy"
	Pending   = "Pending"
	Disabled  = "Disabled"
)

const readyCondition = "Ready"

// Peering is what this cluster holds about one peer.
type Peering struct {
	Namespace string
	// Consumer side: the peer is our provider.
	Identity     *authv1beta1.Identity
	VirtualNodes []offv1beta1.VirtualNode
	Nodes        map[string]*corev1.Node
	// Provider side: the peer is our consumer.
	Tenant *authv1beta1.Tenant
	Quotas []offv1beta1.Quota
	// Network fabric, either side: the Configuration of the peer's CIDRs,
	// this cluster's gateway to it (server or client) and its Connections.
	Configuration *netv1beta1.Configuration
	GatewayServer *netv1beta1.GatewayServer
	GatewayClient *netv1beta1.GatewayClient
	Connections   []netv1beta1.Connection
	// OutOfBand tells that liqoctl peer out-of-band asked this cluster to
	// peer with the peer as its provider (the request Secret): the
	// ForeignCluster exists from then on, to carry the manager's progress.
	OutOfBand bool
}

// Status computes a ForeignCluster's status. Pure, so each combination of
// objects is a table-test row.
func Status(p *Peering) corev1beta1.ForeignClusterStatus {
	st := corev1beta1.ForeignClusterStatus{Role: role(p)}
	st.TenantNamespace.Local = p.Namespace
	if p.Identity != nil {
		st.APIServerURL = p.Identity.Spec.AuthParams.APIServer
		if p.Identity.Spec.Namespace != nil {
			st.TenantNamespace.Remote = *p.Identity.Spec.Namespace
		}
	}
	st.Modules.Authentication = authentication(p)
	st.Modules.Offloading = offloading(p)
	st.Modules.Networking = networking(p)
	return st
}

func role(p *Peering) corev1beta1.RoleType {
	provider, consumer := p.Identity != nil || p.OutOfBand, p.Tenant != nil
	switch {
	case provider && consumer:
		return corev1beta1.ConsumerAndProviderRole
	case provider:
		return corev1beta1.ProviderRole
	case consumer:
		return corev1beta1.ConsumerRole
	}
	return corev1beta1.UnknownRole
}

func authentication(p *Peering) corev1beta1.Module {
	var m corev1beta1.Module
	if p.Identity != nil {
		m.Conditions = append(m.Conditions, readiness(corev1beta1.AuthIdentityControlPlaneStatusCondition,
			meta.FindStatusCondition(p.Identity.Status.Conditions, readyCondition)))
	}
	if p.Tenant != nil {
		m.Conditions = append(m.Conditions, readiness(corev1beta1.AuthTenantStatusCondition,
			meta.FindStatusCondition(p.Tenant.Status.Conditions, readyCondition)))
	}
	return summarise(m)
}

func offloading(p *Peering) corev1beta1.Module {
	var m corev1beta1.Module
	for i := range p.VirtualNodes {
		vn := &p.VirtualNodes[i]
		c := corev1beta1.Condition{Type: corev1beta1.OffloadingVirtualNodeStatusCondition, Status: corev1beta1.PendingStatus,
			Reason: "VirtualNodeCreating", Message: "virtual node " + vn.Name + " is starting"}
		for _, vc := range vn.Status.Conditions {
			if vc.Type == offv1beta1.VirtualKubeletCondition && vc.Status == offv1beta1.RunningVirtualNodeStatus {
				c.Status, c.Reason, c.Message = corev1beta1.ReadyStatus, "VirtualNodeRunning", "virtual node "+vn.Name+" is running"
			}
		}
		m.Conditions = append(m.Conditions, c)
		m.Conditions = append(m.Conditions, nodeCondition(vn.Name, p.Nodes[vn.Name]))
	}
	if len(p.Quotas) > 0 {
		m.Conditions = append(m.Conditions, corev1beta1.Condition{Type: corev1beta1.OffloadingQuotaStatusCondition, Status: corev1beta1.EstablishedStatus,
			Reason: "ResourcesGranted", Message: "the consumer was granted resources"})
	}
	return summarise(m)
}

// networking sums up the fabric with the peer: its CIDRs mapped, this
// side's gateway, and each tunnel's state with its last round trip.
func networking(p *Peering) corev1beta1.Module {
	var m corev1beta1.Module
	if cfg := p.Configuration; cfg != nil {
		c := corev1beta1.Condition{Type: corev1beta1.NetworkConfigurationStatusCondition, Status: corev1beta1.PendingStatus,
			Reason: "Pending", Message: "the peer's CIDRs are not mapped yet"}
		if cc := meta.FindStatusCondition(cfg.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition); cc != nil {
			c.Reason, c.Message = cc.Reason, cc.Message
			if cc.Status == metav1.ConditionTrue {
				c.Status = corev1beta1.EstablishedStatus
			} else {
				c.Status = corev1beta1.ErrorStatus
			}
		}
		m.Conditions = append(m.Conditions, c)
	}
	if gw := p.GatewayServer; gw != nil {
		m.Conditions = append(m.Conditions, corev1beta1.Condition{Type: corev1beta1.NetworkGatewayServerStatusCondition,
			Status: corev1beta1.EstablishedStatus, Reason: "GatewayServer", Message: "this cluster serves the tunnel (gateway " + gw.Name + ")"})
	}
	if gw := p.GatewayClient; gw != nil {
		m.Conditions = append(m.Conditions, corev1beta1.Condition{Type: corev1beta1.NetworkGatewayClientStatusCondition,
			Status: corev1beta1.EstablishedStatus, Reason: "GatewayClient", Message: "this cluster dials the tunnel (gateway " + gw.Name + ")"})
	}
	for i := range p.Connections {
		conn := &p.Connections[i]
		c := corev1beta1.Condition{Type: corev1beta1.NetworkConnectionStatusCondition, Reason: string(conn.Status.Value)}
		switch conn.Status.Value {
		case netv1beta1.Connected:
			c.Status, c.Message = corev1beta1.EstablishedStatus, "the tunnel is up"
			if l := conn.Status.Latency.Value; l != "" {
				c.Message += ", round trip " + l
			}
		case netv1beta1.ConnectionError:
			c.Status, c.Message = corev1beta1.ErrorStatus, "the peer stopped answering through the tunnel"
		default:
			c.Status, c.Reason, c.Message = corev1beta1.PendingStatus, string(netv1beta1.Connecting), "waiting for the peer's first answer"
		}
		if cc := meta.FindStatusCondition(conn.Status.Conditions, netv1beta1.ConnectedCondition); cc != nil && cc.Message != "" && c.Status != corev1beta1.EstablishedStatus {
			c.Message = cc.Message
		}
		m.Conditions = append(m.Conditions, c)
	}
	return summarise(m)
}

func nodeCondition(name string, n *corev1.Node) corev1beta1.Condition {
	c := corev1beta1.Condition{Type: corev1beta1.OffloadingNodeStatusCondition, Status: corev1beta1.PendingStatus,
		Reason: "NodeMissing", Message: "node " + name + " does not exist yet"}
	if n == nil {
		return c
	}
	for _, nc := range n.Status.Conditions {
		if nc.Type != corev1.NodeReady {
			continue
		}
		c.Reason, c.Message = nc.Reason, nc.Message
		if nc.Status == corev1.ConditionTrue {
			c.Status = corev1beta1.ReadyStatus
		} else {
			c.Status = corev1beta1.NotReadyStatus
		}
	}
	return c
}

// readiness maps a Ready condition of a Tenant or Identity to a module
// condition.
func readiness(t corev1beta1.ConditionType, ready *metav1.Condition) corev1beta1.Condition {
	c := corev1beta1.Condition{Type: t, Status: corev1beta1.PendingStatus, Reason: "Pending", Message: "not processed yet"}
	if ready == nil {
		return c
	}
	c.Reason, c.Message = ready.Reason, ready.Message
	switch {
	case ready.Status == "True":
		c.Status = corev1beta1.EstablishedStatus
	case ready.Reason == "CertificatePending":
		c.Status = corev1beta1.PendingStatus
	default:
		c.Status = corev1beta1.ErrorStatus
	}
	return c
}

// summarise enables a module with conditions and sums them up in one word.
func summarise(m corev1beta1.Module) corev1beta1.Module {
	if len(m.Conditions) == 0 {
		m.Summary = Disabled
		return m
	}
	m.Enabled = true
	m.Summary = Healthy
	for _, c := range m.Conditions {
		switch c.Status {
		case corev1beta1.ErrorStatus, corev1beta1.NotReadyStatus, corev1beta1.SomeNotReadyStatus:
			m.Summary = Unhealthy
			return m
		case corev1beta1.PendingStatus:
			m.Summary = Pending
		}
	}
	return m
}
