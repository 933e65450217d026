package budget

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/quota"
	"github.com/liqo-go/liqo/pkg/webhook/tenancy"
)

// ObjectKey names one object in the object budget's ledger: its kind too,
// as a ConfigMap and a Secret may share a name.
type ObjectKey struct {
	Resource schema.GroupResource
	types.NamespacedName
}

// budgetedKind is a kind the ObjectBudget counts.
type budgetedKind struct {
	resource schema.GroupResource
	new      func() client.Object
	// marked selects the consumers' objects of the kind: the webhooks
	// refuse a consumer's object without the mark, so none escapes it.
	marked labels.Selector
	// consumer is the consumer an object of the kind counts against; ""
	// for none.
	consumer func(client.Object) string
	// reflected: a consumer writes the kind in its twin namespaces and the
	// reflected objects' webhook judges it.
	reflected bool
	// uncounted: the kind's objects take bytes but not count, as the
	// consumer's Quota bounds their number (ShadowPods).
	uncounted bool
}

// budgetedKinds are the kinds a consumer writes in bulk on a provider.
// In its twins every object it writes carries its origin label (the
// reflected objects' and the ShadowPods' webhooks refuse one without),
// which names the consumer; in its tenant namespace, its replicas carry
// the replication label (the replicas' webhook refuses it any other), and
// the namespace names the consumer.
var budgetedKinds = func() []budgetedKind {
	origin := mustSelector(consts.OriginClusterIDLabel, selection.Exists)
	replica := mustSelector(consts.ReplicationLabel, selection.Equals, "true")
	byOrigin := func(o client.Object) string { return o.GetLabels()[consts.OriginClusterIDLabel] }
	byTenant := func(o client.Object) string {
		id, _ := consts.ClusterIDOfTenantNamespace(o.GetNamespace())
		return id
	}
	twin := func(gr schema.GroupResource, new func() client.Object) budgetedKind {
		return budgetedKind{resource: gr, new: new, marked: origin, consumer: byOrigin, reflected: true}
	}
	tenant := func(gr schema.GroupResource, new func() client.Object) budgetedKind {
		return budgetedKind{resource: gr, new: new, marked: replica, consumer: byTenant}
	}
	return []budgetedKind{
		twin(tenancy.ConfigMapsResource, func() client.Object { return &corev1.ConfigMap{} }),
		twin(tenancy.SecretsResource, func() client.Object { return &corev1.Secret{} }),
		twin(tenancy.ServicesResource, func() client.Object { return &corev1.Service{} }),
		twin(tenancy.IngressesResource, func() client.Object { return &networkingv1.Ingress{} }),
		twin(tenancy.PVCsResource, func() client.Object { return &corev1.PersistentVolumeClaim{} }),
		twin(tenancy.ShadowEndpointSlicesResource, func() client.Object { return &offv1beta1.ShadowEndpointSlice{} }),
		{resource: tenancy.ShadowPodsResource, new: func() client.Object { return &offv1beta1.ShadowPod{} }, marked: origin, consumer: byOrigin,
			uncounted: true},
		tenant(tenancy.ResourceSlicesResource, func() client.Object { return &authv1beta1.ResourceSlice{} }),
		tenant(tenancy.NamespaceMapsResource, func() client.Object { return &offv1beta1.NamespaceMap{} }),
		// A consumer's records name it as their source (the replicas'
		// webhook refuses it any other); this cluster's own records in
		// the same namespace name this cluster and count against no one.
		{resource: tenancy.ExportRecordsResource, new: func() client.Object { return &offv1beta1.ExportRecord{} },
			marked: mustSelector(mcsv1beta1.LabelSourceCluster, selection.Exists), consumer: func(o client.Object) string {
				if id := byTenant(o); id != "" && o.GetLabels()[mcsv1beta1.LabelSourceCluster] == id {
					return id
				}
				return ""
			}},
	}
}()

// budgetedKindOf is the budgeted kind of resource gr.
func budgetedKindOf(gr schema.GroupResource) (budgetedKind, bool) {
	for _, k := range budgetedKinds {
		if k.resource == gr {
			return k, true
		}
	}
	return budgetedKind{}, false
}

func mustSelector(key string, op selection.Operator, values ...string) labels.Selector {
	r, err := labels.NewRequirement(key, op, values)
	if err != nil {
		panic(err) // constant arguments
	}
	return labels.NewSelector().Add(*r)
}

// SizeOf is the size an object takes in the budget: its JSON, without
// the type, which a stored object and one under admission do not share.
// Managed fields count: etcd stores them too. It changes obj's type meta.
func SizeOf(obj client.Object) (int64, error) {
	obj.GetObjectKind().SetGroupVersionKind(schema.GroupVersionKind{})
	b, err := json.Marshal(obj)
	if err != nil {
		return 0, fmt.Errorf("measuring %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return int64(len(b)), nil
}

// sized is what the budget's cache keeps of an object: who it is, whom it
// counts against and its size. Not the object: a consumer's objects are
// what the budget bounds, and caching them would put them in this
// process's memory.
type sized struct {
	metav1.TypeMeta
	metav1.ObjectMeta
	consumer string
	size     int64
	counted  bool
}

// DeepCopyObject copies s, as a runtime.Object must.
func (s *sized) DeepCopyObject() runtime.Object {
	c := *s
	s.DeepCopyInto(&c.ObjectMeta)
	return &c
}

// trim is the budget cache's transform of the kind: an object becomes
// its sized record. An informer may hand it a record again.
func (k budgetedKind) trim(obj any) (any, error) {
	o, ok := obj.(client.Object)
	if _, done := obj.(*sized); done || !ok {
		return obj, nil
	}
	size, err := SizeOf(o)
	if err != nil {
		return nil, err
	}
	return &sized{ObjectMeta: metav1.ObjectMeta{Name: o.GetName(), Namespace: o.GetNamespace(), UID: o.GetUID(),
		ResourceVersion: o.GetResourceVersion()}, consumer: k.consumer(o), size: size, counted: !k.uncounted}, nil
}

// feedBudget keeps the ledger in step with the stored objects of every
// budgeted kind, through a cache of their sized records: its own, as the
// manager's keeps some of these kinds whole for its controllers and
// others (consumers' Secrets) not at all. It runs on every replica, as the
// webhooks do. It returns whether the initial lists have reached the
// ledger.
func feedBudget(mgr manager.Manager, l *quota.Ledger[ObjectKey]) (func() bool, error) {
	byObject := map[client.Object]cache.ByObject{}
	for _, k := range budgetedKinds {
		byObject[k.new()] = cache.ByObject{Label: k.marked, Transform: k.trim}
	}
	c, err := cache.New(mgr.GetConfig(), cache.Options{HTTPClient: mgr.GetHTTPClient(), Scheme: mgr.GetScheme(),
		Mapper: mgr.GetRESTMapper(), ByObject: byObject})
	if err != nil {
		return nil, err
	}
	var regs []toolscache.ResourceEventHandlerRegistration
	for _, k := range budgetedKinds {
		inf, err := c.GetInformer(context.Background(), k.new())
		if err != nil {
			return nil, fmt.Errorf("watching %s: %w", k.resource, err)
		}
		reg, err := inf.AddEventHandler(budgetFeed(l, k.resource))
		if err != nil {
			return nil, err
		}
		regs = append(regs, reg)
	}
	if err := mgr.Add(everyReplica{c}); err != nil {
		return nil, err
	}
	return func() bool {
		for _, r := range regs {
			if !r.HasSynced() {
				return false
			}
		}
		return true
	}, nil
}

// budgetFeed moves the sized records of resource's objects into the
// ledger.
func budgetFeed(l *quota.Ledger[ObjectKey], resource schema.GroupResource) toolscache.ResourceEventHandlerFuncs {
	key := func(s *sized) ObjectKey {
		return ObjectKey{Resource: resource, NamespacedName: types.NamespacedName{Namespace: s.Namespace, Name: s.Name}}
	}
	observe := func(obj any) {
		if s, ok := obj.(*sized); ok && s.consumer != "" {
			l.Observe(s.consumer, key(s), Footprint(s.size, s.counted))
		}
	}
	forget := func(obj any) {
		if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		if s, ok := obj.(*sized); ok && s.consumer != "" {
			l.Forget(s.consumer, key(s), s.UID, nil)
		}
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: observe,
		UpdateFunc: func(old, obj any) {
			// An administrator relabelling an object moves it to
			// another consumer's account.
			if o, ok := old.(*sized); ok {
				if s, ok := obj.(*sized); ok && o.consumer != s.consumer {
					forget(old)
				}
			}
			observe(obj)
		},
		DeleteFunc: forget,
	}
}

// everyReplica runs a cache on every replica, not only on the leader,
// where the manager runs what does not say otherwise.
type everyReplica struct{ cache.Cache }

func (everyReplica) NeedLeaderElection() bool { return false }

// NewObject is an empty object of the budgeted kind gr, nil for a kind the
// budget does not count, and whether consumers write the kind in their
// twin namespaces, where the reflected objects' webhook judges it.
func NewObject(gr schema.GroupResource) (obj client.Object, reflected bool) {
	k, ok := budgetedKindOf(gr)
	if !ok {
		return nil, false
	}
	return k.new(), k.reflected
}
