package dashboard

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"

	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/liqoctl/info"
)

// maxEvents is how many Events the timeline keeps, across clusters.
const maxEvents = 100

// Build makes the picture from every cluster's snapshot. It is pure: each
// combination of objects is a table-test row. Version and Updated are the
// hub's to set.
func Build(snaps []Snapshot) State {
	st := State{Clusters: []Cluster{}, Peerings: []Peering{}, Namespaces: []Namespace{}, TroubledPods: []TroubledPod{}, Events: []Event{}}
	known := map[string]bool{}
	edges := map[string]*edge{}
	for i := range snaps {
		s := &snaps[i]
		id := cmp.Or(s.ID, s.Context)
		known[id] = true
		st.Clusters = append(st.Clusters, Cluster{ID: id, Context: s.Context, Watched: s.Error == "", APIServer: s.APIServer,
			Labels: s.Labels, Error: s.Error, WatchError: s.WatchError})
		if s.Error != "" {
			continue
		}
		rep := info.Build(info.LocalCluster{ClusterID: s.ID}, &s.Objects)
		for j := range rep.Peerings {
			p := &rep.Peerings[j]
			if info.IsProvider(p.Role) {
				edgeOf(edges, s.ID, p.ClusterID).consumer = &view{snap: s, peering: p}
			}
			if info.IsConsumer(p.Role) {
				edgeOf(edges, p.ClusterID, s.ID).provider = &view{snap: s, peering: p}
			}
		}
		virtual := virtualNodes(s)
		st.Namespaces = append(st.Namespaces, namespaces(s, virtual)...)
		st.TroubledPods = append(st.TroubledPods, troubledPods(s, virtual)...)
		st.Events = append(st.Events, events(s)...)
	}
	for _, e := range edges {
		st.Peerings = append(st.Peerings, e.peering())
		for _, id := range []string{e.consumerID, e.providerID} {
			if !known[id] {
				known[id] = true
				st.Clusters = append(st.Clusters, Cluster{ID: id})
			}
		}
	}
	slices.SortFunc(st.Clusters, func(a, b Cluster) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(st.Peerings, func(a, b Peering) int { return strings.Compare(a.ID, b.ID) })
	slices.SortFunc(st.Namespaces, func(a, b Namespace) int {
		return cmp.Or(strings.Compare(a.Cluster, b.Cluster), strings.Compare(a.Name, b.Name))
	})
	slices.SortFunc(st.TroubledPods, func(a, b TroubledPod) int {
		return cmp.Or(strings.Compare(a.Cluster, b.Cluster), strings.Compare(a.Namespace, b.Namespace), strings.Compare(a.Name, b.Name))
	})
	slices.SortFunc(st.Events, func(a, b Event) int {
		return cmp.Or(b.Time.Compare(a.Time), strings.Compare(a.Cluster, b.Cluster), strings.Compare(a.Object, b.Object), strings.Compare(a.Reason, b.Reason))
	})
	if len(st.Events) > maxEvents {
		st.Events = st.Events[:maxEvents]
	}
	return st
}

// view is one side's report of a peering: its ForeignCluster, as `liqoctl
// info` reads it, and the cluster's objects.
type view struct {
	snap    *Snapshot
	peering *info.Peering
}

// edge gathers both sides' views of one consumer → provider peering.
type edge struct {
	consumerID, providerID string
	consumer, provider     *view
}

func edgeOf(edges map[string]*edge, consumer, provider string) *edge {
	key := consumer + "->" + provider
	if e, ok := edges[key]; ok {
		return e
	}
	e := &edge{consumerID: consumer, providerID: provider}
	edges[key] = e
	return e
}

func (e *edge) views() []*view {
	var out []*view
	for _, v := range []*view{e.consumer, e.provider} {
		if v != nil {
			out = append(out, v)
		}
	}
	return out
}

func (e *edge) peering() Peering {
	p := Peering{ID: e.consumerID + "->" + e.providerID, Consumer: e.consumerID, Provider: e.providerID, SeenBy: []string{}}
	var auth, off, net []moduleView
	for _, v := range e.views() {
		p.SeenBy = append(p.SeenBy, v.snap.ID)
		auth = append(auth, moduleView{v.snap.ID, v.peering.Authentication})
		off = append(off, moduleView{v.snap.ID, v.peering.Offloading})
		net = append(net, moduleView{v.snap.ID, v.peering.Networking})
		if p.Latency == "" {
			p.Latency = v.peering.Networking.Latency
		}
		p.CIDRs = append(p.CIDRs, remappedCIDRs(v.snap, v.peering.TenantNamespace.Local, v.peering.ClusterID)...)
	}
	p.Authentication, p.Offloading, p.Networking = merge(auth), merge(off), merge(net)
	p.Health = HealthDisabled
	for _, m := range []Module{p.Authentication, p.Offloading, p.Networking} {
		if m.Status != HealthDisabled && (p.Health == HealthDisabled || rank(m.Status) < rank(p.Health)) {
			p.Health = m.Status
		}
	}
	if p.Health == HealthDisabled {
		p.Health = HealthPending
	}
	// The consumer holds the slices and the virtual nodes; a provider
	// alone in the kubeconfig still shows the slices its consumer sent.
	src := e.consumer
	if src == nil {
		src = e.provider
	}
	p.Slices = src.peering.ResourceSlices
	if e.consumer != nil {
		p.VirtualNodes = e.consumer.peering.VirtualNodes
		p.Used = used(e.consumer.snap, e.providerID)
	}
	return p
}

type moduleView struct {
	cluster string
	module  info.ModuleInfo
}

// merge makes one module state of both sides': the worst enabled one, with
// every condition that is not fine.
func merge(views []moduleView) Module {
	m := Module{Status: HealthDisabled}
	for _, v := range views {
		if !v.module.Enabled {
			continue
		}
		s := health(v.module.Status)
		if m.Status == HealthDisabled || rank(s) < rank(m.Status) {
			m.Status = s
		}
		for _, c := range v.module.Conditions {
			if fine(c.Status) {
				continue
			}
			m.Problems = append(m.Problems, strings.TrimSpace(fmt.Sprintf("%s: %s %s: %s %s", v.cluster, c.Type, c.Status, c.Reason, c.Message)))
		}
	}
	return m
}

// health maps a module's summary to the dashboard's words: anything but
// Healthy, Unhealthy and Disabled (Pending, Unknown) is Pending.
func health(summary string) string {
	switch summary {
	case HealthHealthy, HealthUnhealthy, HealthDisabled:
		return summary
	}
	return HealthPending
}

func rank(h string) int {
	return slices.Index([]string{HealthUnhealthy, HealthPending, HealthHealthy, HealthDisabled}, h)
}

func fine(status string) bool {
	switch corev1beta1.ConditionStatusType(status) {
	case corev1beta1.EstablishedStatus, corev1beta1.ReadyStatus, corev1beta1.NoneStatus:
		return true
	}
	return false
}

// remappedCIDRs are the peer's CIDRs as this cluster reaches them, from
// the Configuration in the peering's tenant namespace.
func remappedCIDRs(s *Snapshot, tenantNS, peer string) []RemappedCIDR {
	var out []RemappedCIDR
	for i := range s.Configurations {
		cfg := &s.Configurations[i]
		if cfg.Namespace != tenantNS {
			continue
		}
		add := func(kind string, orig, remapped []string) {
			for j, c := range orig {
				r := RemappedCIDR{Of: peer, On: s.ID, Kind: kind, CIDR: c}
				if j < len(remapped) {
					r.Remapped = remapped[j]
				}
				out = append(out, r)
			}
		}
		var remPod, remExt []string
		if st := cfg.Status.Remote; st != nil {
			remPod, remExt = strs(st.CIDR.Pod), strs(st.CIDR.External)
		}
		add("pod", strs(cfg.Spec.Remote.CIDR.Pod), remPod)
		add("external", strs(cfg.Spec.Remote.CIDR.External), remExt)
	}
	return out
}

func strs[S ~string](in []S) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = string(s)
	}
	return out
}

// virtualNodes maps each virtual node's name to the provider it stands for.
func virtualNodes(s *Snapshot) map[string]string {
	out := map[string]string{}
	for i := range s.Objects.VirtualNodes {
		vn := &s.Objects.VirtualNodes[i]
		id := string(vn.Spec.ClusterID)
		if id == "" {
			id = strings.TrimPrefix(vn.Namespace, consts.TenantNamespace(""))
		}
		out[vn.Name] = id
	}
	return out
}

// used sums what the pods on the provider's virtual nodes request, but
// those the provider refused: they hold nothing of its resources.
func used(s *Snapshot, provider string) map[string]string {
	virtual := virtualNodes(s)
	var lists []corev1.ResourceList
	for i := range s.Pods {
		pod := &s.Pods[i]
		if virtual[pod.Spec.NodeName] != provider || terminated(pod) || pod.Status.Reason == reasonOffloadingBackOff {
			continue
		}
		for _, c := range pod.Spec.Containers {
			lists = append(lists, c.Resources.Requests)
		}
	}
	return info.Sum(lists...)
}

func terminated(pod *corev1.Pod) bool {
	return pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
}

// namespaces are the cluster's offloaded namespaces with their twins and
// where their pods run.
func namespaces(s *Snapshot, virtual map[string]string) []Namespace {
	var out []Namespace
	for i := range s.NamespaceOffloadings {
		no := &s.NamespaceOffloadings[i]
		ns := Namespace{Cluster: s.ID, Name: no.Namespace, Phase: string(no.Status.OffloadingPhase),
			PodStrategy: string(no.Spec.PodOffloadingStrategy), MappingStrategy: string(no.Spec.NamespaceMappingStrategy), Twins: []Twin{}}
		if ns.Phase == "" {
			ns.Phase = TwinPending
		}
		for cluster, conds := range no.Status.RemoteNamespacesConditions {
			ns.Twins = append(ns.Twins, twin(s, no, cluster, conds))
		}
		slices.SortFunc(ns.Twins, func(a, b Twin) int { return strings.Compare(a.Cluster, b.Cluster) })
		for j := range s.Pods {
			pod := &s.Pods[j]
			if pod.Namespace != no.Namespace || terminated(pod) {
				continue
			}
			switch provider, remote := virtual[pod.Spec.NodeName]; {
			case pod.Spec.NodeName == "":
				ns.PendingPods++
			case remote:
				if ns.RemotePods == nil {
					ns.RemotePods = map[string]int{}
				}
				ns.RemotePods[provider]++
			default:
				ns.LocalPods++
			}
		}
		out = append(out, ns)
	}
	return out
}

// twin is the namespace's twin on cluster: its name as the cluster's
// NamespaceMap records it, its state from the NamespaceOffloading's
// conditions.
func twin(s *Snapshot, no *offv1beta1.NamespaceOffloading, cluster string, conds offv1beta1.RemoteNamespaceConditions) Twin {
	t := Twin{Cluster: cluster, Name: no.Status.RemoteNamespaceName, State: TwinPending}
	key := consts.NamespaceMapKey(cluster)
	for i := range s.NamespaceMaps {
		m := &s.NamespaceMaps[i]
		if m.Namespace != key.Namespace || m.Name != key.Name {
			continue
		}
		if cur, ok := m.Status.CurrentMapping[no.Namespace]; ok && cur.RemoteNamespace != "" {
			t.Name = cur.RemoteNamespace
		}
	}
	for _, c := range conds {
		switch {
		case c.Type == offv1beta1.NamespaceOffloadingRequired && c.Status == corev1.ConditionFalse:
			t.State, t.Reason = TwinNotSelected, c.Reason
			return t
		case c.Type == offv1beta1.NamespaceReady && c.Status == corev1.ConditionTrue:
			t.State, t.Reason = TwinReady, ""
		case c.Type == offv1beta1.NamespaceReady && c.Status == corev1.ConditionFalse:
			t.State, t.Reason = TwinNotReady, strings.TrimSpace(c.Reason+": "+c.Message)
		}
	}
	return t
}

// reasonOffloadingBackOff is the reason the virtual kubelet gives a pod a
// provider does not run (pkg/virtualkubelet/forge's, which liqoctl does not
// link).
const reasonOffloadingBackOff = "OffloadingBackOff"

// troubledPods are the pods of the cluster's offloaded namespaces, and the
// pods on its virtual nodes, that are in trouble.
func troubledPods(s *Snapshot, virtual map[string]string) []TroubledPod {
	offloaded := map[string]bool{}
	for i := range s.NamespaceOffloadings {
		offloaded[s.NamespaceOffloadings[i].Namespace] = true
	}
	var out []TroubledPod
	for i := range s.Pods {
		pod := &s.Pods[i]
		provider, remote := virtual[pod.Spec.NodeName]
		if !remote && !offloaded[pod.Namespace] {
			continue
		}
		trouble, msg := podTrouble(pod, remote)
		if trouble == "" {
			continue
		}
		out = append(out, TroubledPod{Cluster: s.ID, Namespace: pod.Namespace, Name: pod.Name, Node: pod.Spec.NodeName,
			Provider: provider, Trouble: trouble, Message: msg})
	}
	return out
}

// podTrouble says what is wrong with a pod, if anything, in the words the
// pod's status gives (on a virtual node, the provider's).
func podTrouble(pod *corev1.Pod, remote bool) (string, string) {
	st := &pod.Status
	if pod.DeletionTimestamp != nil || st.Phase == corev1.PodSucceeded {
		return "", ""
	}
	if st.Reason == reasonOffloadingBackOff {
		return reasonOffloadingBackOff, st.Message
	}
	if st.Phase == corev1.PodFailed {
		return "Failed", strings.TrimSpace(st.Reason + " " + st.Message)
	}
	for _, cs := range slices.Concat(st.InitContainerStatuses, st.ContainerStatuses) {
		if w := cs.State.Waiting; w != nil && w.Reason != "" && w.Reason != "ContainerCreating" && w.Reason != "PodInitializing" {
			return w.Reason, cs.Name + ": " + w.Message
		}
	}
	if st.Phase != corev1.PodPending {
		return "", ""
	}
	for _, c := range st.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return cmp.Or(c.Reason, "Unschedulable"), c.Message
		}
	}
	if remote && (st.Reason != "" || st.Message != "") {
		return "RemotePending", strings.TrimSpace(st.Reason + " " + st.Message)
	}
	return "", ""
}

// events are the cluster's Events about Liqo's objects, and about pods the
// virtual kubelet could not offload.
func events(s *Snapshot) []Event {
	var out []Event
	for i := range s.Events {
		ev := &s.Events[i]
		group, _, _ := strings.Cut(ev.InvolvedObject.APIVersion, "/")
		if !strings.HasSuffix(group, "liqo.io") && ev.Reason != reasonOffloadingBackOff {
			continue
		}
		t := ev.LastTimestamp.Time
		if t.IsZero() {
			t = ev.EventTime.Time
		}
		if t.IsZero() {
			t = ev.CreationTimestamp.Time
		}
		obj := ev.InvolvedObject.Name
		if ev.InvolvedObject.Namespace != "" {
			obj = ev.InvolvedObject.Namespace + "/" + obj
		}
		out = append(out, Event{Cluster: s.ID, Time: t.UTC(), Type: ev.Type, Reason: ev.Reason, Kind: ev.InvolvedObject.Kind,
			Object: obj, Message: ev.Message, Count: ev.Count})
	}
	return out
}
