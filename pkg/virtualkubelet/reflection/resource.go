package reflection

import (
	"context"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
)

// Kind says how the local objects of one kind (L) are reflected into the
// twin namespaces as remote objects (R, the same kind but for
// EndpointSlices, which become ShadowEndpointSlices).
type Kind[L, R client.Object] struct {
	// Name is the kind's plural, as in the metrics and the flags.
	Name      string
	NewLocal  func() L
	NewRemote func() R
	// RemoteName maps a local name to its remote copy's ("" for none);
	// LocalName is its inverse. Both default to the identity.
	RemoteName, LocalName func(string) string
	// Forge is the remote copy of a local object in remoteNamespace; false
	// when the object has none (and any copy must go).
	Forge func(local L, remoteNamespace string) (R, bool)
	// Content is what, besides labels and annotations, must match between
	// the wanted copy and the remote object, which the remote cluster may
	// have defaulted or extended.
	Content func(R) any
}

// resource is what the reflection needs of a kind whatever its types.
type resource interface {
	// watch adds the kind's informers to the twin's caches.
	watch(ctx context.Context, t *twin) ([]toolscache.InformerSynced, error)
	// enqueueNamespace requeues every local object of the kind in a local
	// namespace.
	enqueueNamespace(ctx context.Context, t *twin)
	// remoteCache is the kind's remote object and how the twins' caches
	// restrict it.
	remoteCache(ours labels.Selector) (client.Object, cache.ByObject)
	// forget drops what is known of a namespace no longer reflected.
	forget(local string)
	run(ctx context.Context, workers int)
}

// kindReflector keeps the remote copies of one kind.
type kindReflector[L, R client.Object] struct {
	Kind[L, R]
	kindQueue
	policy forge.Policy
}

func newKindReflector[L, R client.Object](r *providerReflection, k Kind[L, R], policy forge.Policy) *kindReflector[L, R] {
	if k.RemoteName == nil {
		k.RemoteName = identity
	}
	if k.LocalName == nil {
		k.LocalName = identity
	}
	return &kindReflector[L, R]{Kind: k, kindQueue: newKindQueue(r, k.Name), policy: policy}
}

func identity(s string) string { return s }

func (k *kindReflector[L, R]) remoteCache(ours labels.Selector) (client.Object, cache.ByObject) {
	return k.NewRemote(), cache.ByObject{Label: ours}
}

func (k *kindReflector[L, R]) watch(ctx context.Context, t *twin) ([]toolscache.InformerSynced, error) {
	local, err := k.follow(ctx, t, t.localCache, k.NewLocal(), identity)
	if err != nil {
		return nil, err
	}
	remote, err := k.follow(ctx, t, t.cache, k.NewRemote(), k.LocalName)
	if err != nil {
		return nil, err
	}
	return []toolscache.InformerSynced{local, remote}, nil
}

func (k *kindReflector[L, R]) enqueueNamespace(ctx context.Context, t *twin) {
	k.enqueueAll(ctx, t, t.localCache, k.NewLocal(), t.local, identity)
	k.enqueueAll(ctx, t, t.cache, k.NewRemote(), t.remote, k.LocalName)
}

func (k *kindReflector[L, R]) run(ctx context.Context, workers int) {
	k.work(ctx, workers, k.reconcile)
}

// conflictRetry is how often an object whose remote name is taken by an
// object we did not create is tried again: nothing tells us when the
// other object goes.
const conflictRetry = 30 * time.Second

// reconcile brings the remote copy of one local object in line with it.
func (k *kindReflector[L, R]) reconcile(ctx context.Context, key types.NamespacedName) (time.Duration, error) {
	t := k.r.twinOf(key.Namespace)
	if t == nil || !t.kindReady(k.Name) {
		// Enqueued again once the twin's watches are synced; a twin that
		// went away takes its copies with it.
		return 0, nil
	}
	local := k.NewLocal()
	found, err := get(ctx, t.localCache, key, local)
	if err != nil {
		return 0, err
	}
	remoteName := k.RemoteName(key.Name)
	if remoteName == "" {
		return 0, nil
	}
	var want R
	wanted := false
	if found && k.policy.Selected(local.GetAnnotations()) {
		want, wanted = k.Forge(local, t.remote)
	}
	current := k.NewRemote()
	has, err := get(ctx, t.cache, types.NamespacedName{Namespace: t.remote, Name: remoteName}, current)
	if err != nil {
		return 0, err
	}
	k.metrics.observe(key, wanted && has)

	switch {
	case !wanted && has:
		return 0, k.delete(ctx, current)
	case !wanted:
		return 0, nil
	case !has:
		return k.create(ctx, local, want)
	case k.same(want, current):
		return 0, nil
	}
	want.SetResourceVersion(current.GetResourceVersion())
	switch err := k.r.remote.Update(ctx, want); {
	case err == nil:
		k.metrics.operations.WithLabelValues("update").Inc()
		return 0, nil
	case apierrors.IsInvalid(err):
		// An immutable field changed (an immutable ConfigMap's data, a
		// Secret's type): only a new object can carry it.
		return 0, k.delete(ctx, current)
	case apierrors.IsForbidden(err):
		return k.refused(local, want, err), nil
	default:
		return 0, client.IgnoreNotFound(err)
	}
}

func (k *kindReflector[L, R]) same(want, current R) bool {
	return equality.Semantic.DeepEqual(want.GetLabels(), current.GetLabels()) &&
		equality.Semantic.DeepEqual(want.GetAnnotations(), current.GetAnnotations()) &&
		equality.Semantic.DeepEqual(k.Content(want), k.Content(current))
}

// create makes the remote copy. A name taken by an object we did not
// create is left alone and reported on the local object.
func (k *kindReflector[L, R]) create(ctx context.Context, local L, want R) (time.Duration, error) {
	err := k.r.remote.Create(ctx, want)
	if err == nil {
		k.metrics.operations.WithLabelValues("create").Inc()
		return 0, nil
	}
	if apierrors.IsForbidden(err) {
		return k.refused(local, want, err), nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return 0, err
	}
	other := k.NewRemote()
	if err := k.r.remote.Get(ctx, client.ObjectKeyFromObject(want), other); err != nil {
		return 0, client.IgnoreNotFound(err)
	}
	if forge.Ours(other, k.r.cfg.LocalClusterID) {
		// Ours, not in the cache yet: its event comes back here.
		return 0, nil
	}
	k.r.cfg.Recorder.Eventf(local, corev1.EventTypeWarning, forge.ReasonReflectionConflict,
		"%s %s/%s exists on cluster %s and was not created by this cluster: not reflected",
		k.Name, want.GetNamespace(), want.GetName(), k.r.cfg.ProviderID)
	return conflictRetry, nil
}

// refusedRetry is how often a copy the provider refused is tried again:
// nothing tells the consumer when the provider's policy or a twin's quota
// changes, and a local change is tried at once anyway.
const refusedRetry = time.Minute

// refused tells on the local object why the provider would not take its
// copy: its admission policy (a Service type it does not allow, its
// webhook's message naming the setting) or the twin namespace's quota (node
// ports, load balancers). Without it the copy would be missing with nothing
// on the consumer's side to say so. The Event recorder folds the repeats of
// one refusal into a count.
func (k *kindReflector[L, R]) refused(local L, want R, err error) time.Duration {
	msg := fmt.Sprintf("cluster %s refused %s %s/%s: %v", k.r.cfg.ProviderID, k.Name, want.GetNamespace(), want.GetName(), err)
	if strings.Contains(err.Error(), "exceeded quota") {
		msg += " (the provider's twin namespace quota, --twin-namespace-quota, bounds the objects of each namespace, node ports and load balancers among them)"
	}
	k.r.cfg.Recorder.Event(local, corev1.EventTypeWarning, forge.ReasonReflectionRefused, msg)
	return refusedRetry
}

func (k *kindReflector[L, R]) delete(ctx context.Context, current R) error {
	uid := current.GetUID()
	err := k.r.remote.Delete(ctx, current, client.Preconditions{UID: &uid})
	if err == nil {
		k.metrics.operations.WithLabelValues("delete").Inc()
	}
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("deleting %s %s/%s: %w", k.Name, current.GetNamespace(), current.GetName(), err)
	}
	return nil
}

// get reads an object from a cache, reporting whether it exists.
func get(ctx context.Context, c cache.Cache, key types.NamespacedName, obj client.Object) (bool, error) {
	err := c.Get(ctx, key, obj)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// names lists the names of the objects of obj's kind in a namespace of a
// cache.
func (r *providerReflection) names(ctx context.Context, c cache.Cache, obj client.Object, namespace string) ([]string, error) {
	gvk, err := apiutil.GVKForObject(obj, r.cfg.Scheme)
	if err != nil {
		return nil, err
	}
	o, err := r.cfg.Scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, err
	}
	list, ok := o.(client.ObjectList)
	if !ok {
		return nil, fmt.Errorf("%s is not a list", gvk.Kind+"List")
	}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	var names []string
	err = meta.EachListItem(list, func(o runtime.Object) error {
		if m, ok := o.(metav1.Object); ok {
			names = append(names, m.GetName())
		}
		return nil
	})
	return names, err
}
