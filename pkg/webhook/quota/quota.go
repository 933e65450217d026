package quota

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	resourcehelper "k8s.io/component-helpers/resource"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// Usage is what one ShadowPod, or the sum of a consumer's, takes from its
// quota. Requests count the pod itself as one "pods".
type Usage struct {
	Requests corev1.ResourceList
	Limits   corev1.ResourceList
}

// UsageOf is the usage of a pod spec as the scheduler sees it (init
// containers, sidecars, overhead and pod-level resources included). A
// ShadowPod's spec is not defaulted like a Pod's, so this does what the API
// server will do to the real pod: a limit without a request is the request
// too, for a container as for the pod (whose request is then its
// containers' if they ask for the resource). A container without a limit
// counts its request as its limit, and no limit counts less than its
// request: Hard enforcement then never sees less than the pod is
// guaranteed. A container with neither counts nothing, so a pod without
// resources, like the documented test-offload pod, fits any quota with room
// for one more pod.
//
// Pod-level amounts count where they exceed the containers' sum: that is
// the scheduler's view of every pod the API server accepts (it refuses
// pod-level requests below the containers'), and on an API server without
// the PodLevelResources feature, which drops the pod-level field and runs
// the containers' amounts, no less is counted than the pod gets.
func UsageOf(spec *corev1.PodSpec) Usage {
	pod := &corev1.Pod{Spec: *spec.DeepCopy()}
	for _, cs := range [][]corev1.Container{pod.Spec.InitContainers, pod.Spec.Containers} {
		for i := range cs {
			r := &cs[i].Resources
			r.Requests = withMissing(r.Requests, r.Limits)
			r.Limits = withMissing(r.Limits, r.Requests)
		}
	}
	defaultPodRequests(pod)
	containersOnly := resourcehelper.PodResourcesOptions{SkipPodLevelResources: true}
	u := Usage{
		Requests: maxAmounts(resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{}), resourcehelper.PodRequests(pod, containersOnly)),
		Limits:   maxAmounts(resourcehelper.PodLimits(pod, resourcehelper.PodResourcesOptions{}), resourcehelper.PodLimits(pod, containersOnly)),
	}
	u.Limits = maxAmounts(u.Limits, u.Requests)
	u.Requests[corev1.ResourcePods] = *resource.NewQuantity(1, resource.DecimalSI)
	return u
}

// QuotaFields is the part of a pod spec UsageOf reads: the resources of
// the pod and of its containers, the init containers' restart policy (a
// sidecar counts beside the app containers, an init container before
// them) and the overhead. UsageOf gives the same for it as for the whole
// spec (TestQuotaFieldsKeepUsage), so a cache may keep a ShadowPod with
// only these: the ledger reads them again at each of its updates, and a
// ShadowPod's resources never change (the webhook refuses it).
func QuotaFields(spec *corev1.PodSpec) corev1.PodSpec {
	keep := func(cs []corev1.Container) []corev1.Container {
		if cs == nil {
			return nil
		}
		out := make([]corev1.Container, len(cs))
		for i := range cs {
			out[i] = corev1.Container{Resources: cs[i].Resources, RestartPolicy: cs[i].RestartPolicy}
		}
		return out
	}
	return corev1.PodSpec{
		InitContainers: keep(spec.InitContainers),
		Containers:     keep(spec.Containers),
		Overhead:       spec.Overhead,
		Resources:      spec.Resources,
	}
}

// defaultPodRequests defaults the pod-level requests of a pod with
// pod-level limits as the API server does: a resource limited at the pod
// level without a pod-level request is requested as much as its containers
// request together if they do (for cpu and memory, which may be
// overcommitted), as much as the limit otherwise.
func defaultPodRequests(pod *corev1.Pod) {
	r := pod.Spec.Resources
	if r == nil || len(r.Limits) == 0 {
		return
	}
	containers := resourcehelper.AggregateContainerRequests(pod, resourcehelper.PodResourcesOptions{})
	for name, limit := range r.Limits {
		if _, ok := r.Requests[name]; ok || !resourcehelper.IsSupportedPodLevelResource(name) {
			continue
		}
		if r.Requests == nil {
			r.Requests = corev1.ResourceList{}
		}
		r.Requests[name] = limit
		if q, ok := containers[name]; ok && (name == corev1.ResourceCPU || name == corev1.ResourceMemory) {
			r.Requests[name] = q
		}
	}
}

// maxAmounts is, resource by resource, the larger amount of a and b.
func maxAmounts(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for _, l := range []corev1.ResourceList{a, b} {
		for name, q := range l {
			if have, ok := out[name]; !ok || q.Cmp(have) > 0 {
				out[name] = q.DeepCopy()
			}
		}
	}
	return out
}

// withMissing adds to l the amounts of from it lacks.
func withMissing(l, from corev1.ResourceList) corev1.ResourceList {
	for name, q := range from {
		if _, ok := l[name]; !ok {
			if l == nil {
				l = corev1.ResourceList{}
			}
			l[name] = q
		}
	}
	return l
}

// Equal tells whether two usages are the same amounts.
func (u Usage) Equal(o Usage) bool {
	return equalAmounts(u.Requests, o.Requests) && equalAmounts(u.Limits, o.Limits)
}

func equalAmounts(a, b corev1.ResourceList) bool {
	for name, q := range a {
		if q.Cmp(b[name]) != 0 {
			return false
		}
	}
	for name, q := range b {
		if q.Cmp(a[name]) != 0 {
			return false
		}
	}
	return true
}

// clone is a copy of u that shares no amount with it.
func (u Usage) clone() Usage {
	return Usage{Requests: u.Requests.DeepCopy(), Limits: u.Limits.DeepCopy()}
}

// add adds o to u in place.
func (u *Usage) add(o Usage) {
	u.Requests = addTo(u.Requests, o.Requests)
	u.Limits = addTo(u.Limits, o.Limits)
}

// sub takes o, which u holds, out of u in place. Quantities are exact, so
// a sum kept by adding and taking out is the sum of what is left.
func (u *Usage) sub(o Usage) {
	u.Requests = combine(u.Requests, o.Requests, (*resource.Quantity).Sub)
	u.Limits = combine(u.Limits, o.Limits, (*resource.Quantity).Sub)
}

func addTo(l, o corev1.ResourceList) corev1.ResourceList {
	return combine(l, o, (*resource.Quantity).Add)
}

// combine applies op to each amount of l with o's of the same name, in
// place (l is made if nil).
func combine(l, o corev1.ResourceList, op func(*resource.Quantity, resource.Quantity)) corev1.ResourceList {
	if l == nil {
		l = corev1.ResourceList{}
	}
	for name, q := range o {
		v := l[name]
		op(&v, q)
		l[name] = v
	}
	return l
}

// excess is what a asks beyond b, resource by resource (none where b has
// as much).
func excess(a, b corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name, q := range a {
		if have := b[name]; q.Cmp(have) > 0 {
			d := q.DeepCopy()
			d.Sub(have)
			out[name] = d
		}
	}
	return out
}

// Limit is the bound of one consumer's new ShadowPods: the sum of its
// uncordoned Quotas' resources, enforced as the strictest of them says.
type Limit struct {
	Resources   corev1.ResourceList
	Enforcement offv1beta1.LimitsEnforcement
	// Cordoned names the Quotas (each named after its ResourceSlice) whose
	// spec.cordoned withholds their grant from new ShadowPods.
	Cordoned []string
	// Open tells whether any Quota is not cordoned: with none, a new
	// ShadowPod has no grant to use.
	Open bool
}

// LimitOf merges a consumer's Quotas (one per accepted ResourceSlice) into
// the bound of its new ShadowPods. A cordoned Quota's resources are left
// out: the consumer's ShadowPods share its Quotas as one pool, so a
// cordoned slice's grant is withheld by not counting it, whatever a new
// ShadowPod claims about the virtual node it came from; its running
// ShadowPods still count in the usage.
func LimitOf(quotas []offv1beta1.Quota) Limit {
	rank := map[offv1beta1.LimitsEnforcement]int{offv1beta1.NoLimitsEnforcement: 0, offv1beta1.SoftLimitsEnforcement: 1, offv1beta1.HardLimitsEnforcement: 2}
	l := Limit{Enforcement: offv1beta1.NoLimitsEnforcement}
	for i := range quotas {
		q := &quotas[i].Spec
		if q.Cordoned != nil && *q.Cordoned {
			l.Cordoned = append(l.Cordoned, quotas[i].Name)
			continue
		}
		l.Open = true
		l.Resources = addTo(l.Resources, q.Resources)
		e := q.LimitsEnforcement
		if e == "" {
			// The field is optional; an unset one is the strict default.
			e = offv1beta1.HardLimitsEnforcement
		}
		if rank[e] > rank[l.Enforcement] {
			l.Enforcement = e
		}
	}
	slices.Sort(l.Cordoned)
	return l
}

// ExceededError says which resource a new usage would take past its quota.
type ExceededError struct {
	// Resource is the quota's resource name, prefixed with "limits." when
	// the sum of limits exceeds it (Hard enforcement).
	Resource             string
	Requested, Used, Max resource.Quantity
	// Ungranted: no Quota of the consumer names the resource.
	Ungranted bool
}

func (e *ExceededError) Error() string {
	if e.Ungranted {
		return fmt.Sprintf("quota usage exceeded: %s requested %s, none granted (no ResourceSlice of this consumer was granted %s)",
			e.Resource, e.Requested.String(), strings.TrimPrefix(e.Resource, "limits."))
	}
	return fmt.Sprintf("quota usage exceeded: %s requested %s, used %s of %s",
		e.Resource, e.Requested.String(), e.Used.String(), e.Max.String())
}

// Check tells whether add fits next to used. Every resource add asks for
// is bounded, those the quota does not list at zero (GPUs, hugepages, an
// ephemeral storage the provider did not grant: what was not granted is
// not the consumer's to take); only those add asks for, so that a quota
// shrunk below its usage still admits pods that do not need what is
// short. Soft enforcement bounds the sum of requests; Hard also the sum of
// limits; None bounds nothing.
func (l Limit) Check(used, add Usage) error {
	if l.Enforcement == offv1beta1.NoLimitsEnforcement {
		return nil
	}
	check := func(prefix string, used, add corev1.ResourceList) error {
		for _, name := range slices.Sorted(maps.Keys(add)) {
			req := add[name]
			if req.Sign() <= 0 {
				continue
			}
			bound, granted := l.Resources[name]
			if !granted {
				return &ExceededError{Resource: prefix + string(name), Requested: req, Used: used[name], Ungranted: true}
			}
			total := used[name].DeepCopy()
			total.Add(req)
			if total.Cmp(bound) > 0 {
				return &ExceededError{Resource: prefix + string(name), Requested: req, Used: used[name], Max: bound}
			}
		}
		return nil
	}
	if err := check("", used.Requests, add.Requests); err != nil {
		return err
	}
	if l.Enforcement == offv1beta1.HardLimitsEnforcement {
		return check("limits.", used.Limits, add.Limits)
	}
	return nil
}

// usedOf restricts a usage's requests to the quota's resources, as
// Quota.status.used reports them.
func usedOf(u Usage, quota corev1.ResourceList) corev1.ResourceList {
	out := corev1.ResourceList{}
	for name := range quota {
		q := u.Requests[name]
		out[name] = q.DeepCopy()
	}
	return out
}

// SameAmounts compares ResourceLists by value, as a status writer must to
// avoid writing "1" over "1000m".
func SameAmounts(a, b corev1.ResourceList) bool {
	return len(a) == len(b) && equalAmounts(a, b)
}

// OwnQuotas keeps the Quotas bounding consumer.
func OwnQuotas(quotas []offv1beta1.Quota, consumer string) []offv1beta1.Quota {
	out := quotas[:0]
	for _, q := range quotas {
		if q.Spec.User == consts.ConsumerUser(consumer) {
			out = append(out, q)
		}
	}
	return out
}
