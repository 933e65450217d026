package replicator

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	authv1beta1 "github.com/liqo-go/liqo/apis/authentication/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
	"github.com/liqo-go/liqo/pkg/remotecluster"
)

// Kind says how objects of type T are replicated. Its functions are pure:
// they only read and write the objects they are given.
type Kind[T client.Object] struct {
	// Name is the kind as users know it ("ResourceSlice"): it names the
	// controller and appears in Events.
	Name string
	// New returns an empty object; NewList an empty list of them.
	New     func() T
	NewList func() client.ObjectList
	// Mine selects the local objects this cluster replicates.
	Mine func(local T) bool
	// Forge returns a new replica of local carrying what the provider may
	// see of its spec; the replicator sets its name, namespace and labels.
	Forge func(local T) T
	// SyncSpec brings replica's spec in line with local's and reports
	// whether it changed anything.
	SyncSpec func(local, replica T) bool
	// SyncStatus copies replica's status into local and reports whether it
	// changed anything.
	SyncStatus func(replica, local T) bool
	// SyncMeta, if set, copies metadata of the replica that vouches for its
	// status into local, after the status, and reports a change.
	SyncMeta func(replica, local T) bool
}

// Reconciler replicates one Kind to every provider whose tenant namespace
// holds objects of it, through the consumer's own credentials there.
type Reconciler[T client.Object] struct {
	Client    client.Client
	ClusterID string
	Kind      Kind[T]
	// Remotes reaches the providers with this cluster's Identities.
	Remotes *remotecluster.Registry

	recorder record.EventRecorder
	watches  *Watches
}

// Reconcile pushes the spec out and pulls the status in.
func (r *Reconciler[T]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	provider, ok := consts.ClusterIDOfTenantNamespace(req.Namespace)
	if !ok {
		return ctrl.Result{}, nil
	}
	local := r.Kind.New()
	err := r.Client.Get(ctx, req.NamespacedName, local)
	if apierrors.IsNotFound(err) || err == nil && !local.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, r.deleteRemote(ctx, provider, req.Name)
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if !r.Kind.Mine(local) {
		// A remote event named an object that is not ours here (on a cluster
		// that is also a provider, another consumer's replica).
		return ctrl.Result{}, nil
	}
	remote, remoteNS, err := r.client(ctx, provider)
	if err != nil {
		// The Identity is not ready yet: its update requeues us.
		ctrl.LoggerFrom(ctx).Info("provider not reachable yet", "reason", err.Error())
		return ctrl.Result{}, nil
	}

	replica := r.Kind.New()
	err = remote.Get(ctx, types.NamespacedName{Namespace: remoteNS, Name: local.GetName()}, replica)
	switch {
	case apierrors.IsNotFound(err):
		replica = r.Kind.Forge(local)
		replica.SetName(local.GetName())
		replica.SetNamespace(remoteNS)
		replica.SetLabels(ReplicaLabels(r.ClusterID))
		if err := remote.Create(ctx, replica); err != nil {
			return ctrl.Result{}, err
		}
		r.recorder.Eventf(local, corev1.EventTypeNormal, "Replicated", "%s sent to provider %s", r.Kind.Name, provider)
	case err != nil:
		return ctrl.Result{}, err
	case replica.GetLabels()[consts.OriginClusterIDLabel] != r.ClusterID:
		r.recorder.Eventf(local, corev1.EventTypeWarning, "NameConflict",
			"provider %s already has a %s %s/%s that this cluster did not create; leaving it alone", provider, r.Kind.Name, remoteNS, local.GetName())
		return ctrl.Result{}, nil
	case r.Kind.SyncSpec(local, replica):
		if err := remote.Update(ctx, replica); err != nil {
			return ctrl.Result{}, err
		}
	}
	before := local.DeepCopyObject().(client.Object)
	if r.Kind.SyncStatus(replica, local) {
		if err := kit.PatchStatus(ctx, r.Client, local, before); err != nil {
			return ctrl.Result{}, err
		}
	}
	if r.Kind.SyncMeta == nil {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(local.DeepCopyObject().(client.Object))
	if r.Kind.SyncMeta(replica, local) {
		return ctrl.Result{}, r.Client.Patch(ctx, local, patch)
	}
	return ctrl.Result{}, nil
}

// ReplicaLabels mark a replica as a copy made by origin.
func ReplicaLabels(origin string) map[string]string {
	return map[string]string{consts.ManagedByLabel: consts.ManagedByValue, consts.ReplicationLabel: "true",
		consts.OriginClusterIDLabel: origin}
}

// deleteRemote removes the provider's replica of an object that is gone
// locally. If the provider can no longer be reached through an Identity,
// there is nothing this cluster may delete there: unpeer cleans up with the
// admin's credentials instead.
func (r *Reconciler[T]) deleteRemote(ctx context.Context, provider, name string) error {
	remote, remoteNS, err := r.client(ctx, provider)
	if err != nil {
		return nil
	}
	replica := r.Kind.New()
	if err := remote.Get(ctx, types.NamespacedName{Namespace: remoteNS, Name: name}, replica); err != nil {
		return client.IgnoreNotFound(err)
	}
	if replica.GetLabels()[consts.OriginClusterIDLabel] != r.ClusterID {
		return nil
	}
	return client.IgnoreNotFound(remote.Delete(ctx, replica))
}

// SetupWithManager registers the controller, the remote watches and the
// Identity watch that wakes objects waiting for credentials.
func (r *Reconciler[T]) SetupWithManager(mgr ctrl.Manager) error {
	name := strings.ToLower(r.Kind.Name)
	r.recorder = mgr.GetEventRecorderFor("liqo-" + name)
	if r.Remotes == nil {
		return fmt.Errorf("the %s replicator needs the providers' registry", r.Kind.Name)
	}
	r.watches = NewWatches(r.Remotes, func() client.Object { return r.Kind.New() })
	if err := mgr.Add(r.watches); err != nil {
		return err
	}
	mine := predicate.NewPredicateFuncs(func(o client.Object) bool {
		t, ok := o.(T)
		return ok && r.Kind.Mine(t)
	})
	return ctrl.NewControllerManagedBy(mgr).Named(name+"-replicator").
		For(r.Kind.New(), builder.WithPredicates(mine)).
		WatchesRawSource(r.watches.Source(&handler.EnqueueRequestForObject{})).
		Watches(&authv1beta1.Identity{}, handler.EnqueueRequestsFromMapFunc(r.inNamespace)).
		// Unpeered: the provider's client, watches and goroutines go.
		Watches(&authv1beta1.Identity{}, handler.Funcs{
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				if provider, ok := consts.ClusterIDOfTenantNamespace(e.Object.GetNamespace()); ok {
					r.watches.Forget(provider, nil)
					r.Remotes.Forget(provider)
				}
			},
		}).
		Complete(r)
}

// client returns the client of provider and the namespace this cluster
// owns there, and watches the kind there.
func (r *Reconciler[T]) client(ctx context.Context, provider string) (client.Client, string, error) {
	c, ns, err := r.Remotes.Tenant(ctx, provider)
	if err != nil {
		if apierrors.IsNotFound(err) {
			// The peering is gone: its watch goes with it.
			r.watches.Forget(provider, nil)
		}
		return nil, "", err
	}
	if err := r.watches.Ensure(provider, c, ns); err != nil {
		return nil, "", err
	}
	return c.Client, ns, nil
}

// inNamespace maps an Identity to this cluster's objects in its namespace.
func (r *Reconciler[T]) inNamespace(ctx context.Context, o client.Object) []reconcile.Request {
	list := r.Kind.NewList()
	if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
		return nil
	}
	var out []reconcile.Request
	_ = meta.EachListItem(list, func(item runtime.Object) error {
		if t, ok := item.(T); ok && r.Kind.Mine(t) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(t)})
		}
		return nil
	})
	return out
}
