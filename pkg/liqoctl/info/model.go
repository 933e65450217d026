// Package info implements `liqoctl info`: a summary of the local cluster's
// identity and of its peerings, read from the ForeignClusters and the objects
// of each peering's tenant namespace.
package info

import (
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// Info is everything `liqoctl info` reports; -o prints it as is.
type Info struct {
	Local    LocalCluster `json:"local"`
	Peerings []Peering    `json:"peerings"`
	// Services are the Multi-Cluster Services exported and imported here.
	Services Services `json:"multiClusterServices"`
}

// LocalCluster is the identity of the cluster liqoctl talks to.
type LocalCluster struct {
	ClusterID    string            `json:"clusterID"`
	Labels       map[string]string `json:"labels,omitempty"`
	Namespace    string            `json:"namespace"`
	APIServerURL string            `json:"apiServerUrl"`
}

// Peering is the state of the peering with one remote cluster.
type Peering struct {
	ClusterID string `json:"clusterID"`
	// Role is the role of the remote cluster: Provider (we consume from it),
	// Consumer (it consumes from us), ConsumerAndProvider or Unknown.
	Role            string          `json:"role"`
	Authentication  ModuleInfo      `json:"authentication"`
	Offloading      ModuleInfo      `json:"offloading"`
	Networking      ModuleInfo      `json:"networking"`
	APIServerURL    string          `json:"apiServerUrl,omitempty"`
	TenantNamespace TenantNamespace `json:"tenantNamespace"`
	// VirtualNodes are the nodes representing the remote cluster here.
	VirtualNodes []VirtualNodeInfo `json:"virtualNodes,omitempty"`
	// ResourceSlices are our requests of the remote cluster's resources.
	ResourceSlices []ResourceSliceInfo `json:"resourceSlices,omitempty"`
	// ResourcesAcquired sums the virtual nodes' quotas (remote is a provider).
	ResourcesAcquired map[string]string `json:"resourcesAcquired,omitempty"`
	// ResourcesShared sums the Quotas granted to the remote (a consumer).
	ResourcesShared map[string]string `json:"resourcesShared,omitempty"`
}

// TenantNamespace names the namespaces of the peering on both sides.
type TenantNamespace struct {
	Local  string `json:"local,omitempty"`
	Remote string `json:"remote,omitempty"`
}

// ModuleInfo is the state of one peering module.
type ModuleInfo struct {
	Enabled bool `json:"enabled"`
	// Status is the module's summary: Healthy, Unhealthy, Pending or Disabled.
	Status     string          `json:"status"`
	Conditions []ConditionInfo `json:"conditions,omitempty"`
	// Latency, for the networking module, is the last round trip measured
	// through the tunnel while it is up.
	Latency string `json:"latency,omitempty"`
}

// ConditionInfo is one condition of a module.
type ConditionInfo struct {
	Type    string `json:"type"`
	Status  string `json:"status"`
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
}

// VirtualNodeInfo is a virtual node and the readiness of its Node.
type VirtualNodeInfo struct {
	Name  string `json:"name"`
	Ready bool   `json:"ready"`
	// Reason says why the node is not ready.
	Reason string `json:"reason,omitempty"`
}

// ResourceSliceInfo is one ResourceSlice and the provider's answers.
type ResourceSliceInfo struct {
	Name           string `json:"name"`
	Authentication string `json:"authentication"`
	Resources      string `json:"resources"`
	// Requested is what the consumer asked for, Granted what the provider
	// granted.
	Requested map[string]string `json:"requested,omitempty"`
	Granted   map[string]string `json:"granted,omitempty"`
	// LargestFree is the most a single pod can get on one of the
	// provider's nodes (the slice's fit summary).
	LargestFree map[string]string `json:"largestFree,omitempty"`
}

// Objects are the cluster objects Build reads.
type Objects struct {
	ForeignClusters []corev1beta1.ForeignCluster
	VirtualNodes    []offv1beta1.VirtualNode
	// Nodes are the Nodes named after the virtual nodes (missing ones absent).
	Nodes          []corev1.Node
	Quotas         []offv1beta1.Quota
	ResourceSlices []authv1beta1.ResourceSlice
	// Connections are the network fabric's tunnels.
	Connections []netv1beta1.Connection
	// Exports and Imports are the Multi-Cluster Services ones.
	Exports []mcsv1beta1.ServiceExport
	Imports []mcsv1beta1.ServiceImport
}

// Reasons a virtual node is not ready besides its Node's own.
const (
	ReasonNodeMissing         = "NodeMissing"
	ReasonNodeCreationOff     = "NodeCreationDisabled"
	ReasonNodeReadyUnreported = "NoReadyCondition"
	statusPending             = "Pending"
)

// Build makes the Info from the objects. It is pure: the objects of each
// peering are those in its local tenant namespace.
func Build(local LocalCluster, objs *Objects) Info {
	info := Info{Local: local, Peerings: []Peering{}, Services: buildServices(objs.Exports, objs.Imports)}
	nodes := map[string]*corev1.Node{}
	for i := range objs.Nodes {
		nodes[objs.Nodes[i].Name] = &objs.Nodes[i]
	}
	for i := range objs.ForeignClusters {
		info.Peerings = append(info.Peerings, buildPeering(&objs.ForeignClusters[i], objs, nodes))
	}
	sort.Slice(info.Peerings, func(i, j int) bool { return info.Peerings[i].ClusterID < info.Peerings[j].ClusterID })
	return info
}

func buildPeering(fc *corev1beta1.ForeignCluster, objs *Objects, nodes map[string]*corev1.Node) Peering {
	id := string(fc.Spec.ClusterID)
	if id == "" {
		id = fc.Name
	}
	st := &fc.Status
	p := Peering{
		ClusterID:       id,
		Role:            string(st.Role),
		Authentication:  module(st.Modules.Authentication),
		Offloading:      module(st.Modules.Offloading),
		Networking:      module(st.Modules.Networking),
		APIServerURL:    st.APIServerURL,
		TenantNamespace: TenantNamespace{Local: st.TenantNamespace.Local, Remote: st.TenantNamespace.Remote},
	}
	if p.Role == "" {
		p.Role = string(corev1beta1.UnknownRole)
	}
	if p.TenantNamespace.Local == "" {
		p.TenantNamespace.Local = consts.TenantNamespace(id)
	}
	ns := p.TenantNamespace.Local

	var acquired []corev1.ResourceList
	for i := range objs.VirtualNodes {
		vn := &objs.VirtualNodes[i]
		if vn.Namespace != ns {
			continue
		}
		p.VirtualNodes = append(p.VirtualNodes, virtualNode(vn, nodes[vn.Name]))
		acquired = append(acquired, vn.Spec.ResourceQuota.Hard)
	}
	sort.Slice(p.VirtualNodes, func(i, j int) bool { return p.VirtualNodes[i].Name < p.VirtualNodes[j].Name })
	for i := range objs.ResourceSlices {
		if rs := &objs.ResourceSlices[i]; rs.Namespace == ns {
			p.ResourceSlices = append(p.ResourceSlices, resourceSlice(rs))
		}
	}
	sort.Slice(p.ResourceSlices, func(i, j int) bool { return p.ResourceSlices[i].Name < p.ResourceSlices[j].Name })
	for i := range objs.Connections {
		if c := &objs.Connections[i]; c.Namespace == ns && c.Status.Value == netv1beta1.Connected && c.Status.Latency.Value != "" {
			p.Networking.Latency = c.Status.Latency.Value
		}
	}
	var shared []corev1.ResourceList
	for i := range objs.Quotas {
		if q := &objs.Quotas[i]; q.Namespace == ns {
			shared = append(shared, q.Spec.Resources)
		}
	}
	if IsProvider(p.Role) {
		p.ResourcesAcquired = Sum(acquired...)
	}
	if IsConsumer(p.Role) {
		p.ResourcesShared = Sum(shared...)
	}
	return p
}

// IsProvider tells whether a remote with this role provides resources to us.
func IsProvider(role string) bool {
	return role == string(corev1beta1.ProviderRole) || role == string(corev1beta1.ConsumerAndProviderRole)
}

// IsConsumer tells whether a remote with this role consumes our resources.
func IsConsumer(role string) bool {
	return role == string(corev1beta1.ConsumerRole) || role == string(corev1beta1.ConsumerAndProviderRole)
}

func module(m corev1beta1.Module) ModuleInfo {
	out := ModuleInfo{Enabled: m.Enabled, Status: m.Summary}
	if out.Status == "" {
		out.Status = "Disabled"
		if m.Enabled {
			out.Status = "Unknown"
		}
	}
	for _, c := range m.Conditions {
		out.Conditions = append(out.Conditions, ConditionInfo{
			Type: string(c.Type), Status: string(c.Status), Reason: c.Reason, Message: c.Message,
		})
	}
	return out
}

func virtualNode(vn *offv1beta1.VirtualNode, n *corev1.Node) VirtualNodeInfo {
	out := VirtualNodeInfo{Name: vn.Name}
	if n == nil {
		out.Reason = ReasonNodeMissing
		if vn.Spec.CreateNode != nil && !*vn.Spec.CreateNode {
			out.Reason = ReasonNodeCreationOff
		}
		return out
	}
	out.Reason = ReasonNodeReadyUnreported
	for _, c := range n.Status.Conditions {
		if c.Type != corev1.NodeReady {
			continue
		}
		out.Ready = c.Status == corev1.ConditionTrue
		out.Reason = ""
		if !out.Ready {
			out.Reason = c.Reason
			if out.Reason == "" {
				out.Reason = "Ready" + string(c.Status)
			}
		}
	}
	return out
}

func resourceSlice(rs *authv1beta1.ResourceSlice) ResourceSliceInfo {
	out := ResourceSliceInfo{Name: rs.Name, Authentication: statusPending, Resources: statusPending}
	for _, c := range rs.Status.Conditions {
		switch c.Type {
		case authv1beta1.ResourceSliceAuthentication:
			out.Authentication = string(c.Status)
		case authv1beta1.ResourceSliceResources:
			out.Resources = string(c.Status)
		}
	}
	out.Requested = Sum(rs.Spec.Resources)
	out.Granted = Sum(rs.Status.Resources)
	if rs.Status.Fit != nil {
		out.LargestFree = Sum(rs.Status.Fit.Largest())
	}
	return out
}

// Sum adds resource lists up, as strings; nil when there is nothing.
func Sum(lists ...corev1.ResourceList) map[string]string {
	total := corev1.ResourceList{}
	for _, l := range lists {
		for name, q := range l {
			t := total[name]
			t.Add(q)
			total[name] = t
		}
	}
	if len(total) == 0 {
		return nil
	}
	out := make(map[string]string, len(total))
	for name, q := range total {
		out[string(name)] = q.String()
	}
	return out
}

// ParseLabels reads the k=v,k=v form of the cluster-identity ConfigMap,
// tolerantly: blank items are skipped, an item without '=' has an empty value.
func ParseLabels(s string) map[string]string {
	out := map[string]string{}
	for item := range strings.SplitSeq(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, _ := strings.Cut(item, "=")
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
