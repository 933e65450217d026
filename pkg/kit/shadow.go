package kit

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// ShadowKind is what differs between the kinds of shadow objects a
// provider turns into real ones (a ShadowPod into a Pod, a
// ShadowEndpointSlice into an EndpointSlice): how the real object is made,
// kept and reported. ShadowReconciler does the rest, the same way for all.
//
// Every hook that reports (Created, CreateFailed, Sync, Conflict, Refused)
// does so in s's status, which the reconciler writes afterwards, and in
// Events.
type ShadowKind[S, R client.Object] interface {
	// NewShadow and NewReal return empty objects to read into.
	NewShadow() S
	NewReal() R
	// Refusal tells why s must have no real object, "" when it may have
	// one. A NotFound error ends the reconcile quietly: what s lives in is
	// gone, and s goes with it.
	Refusal(ctx context.Context, s S) (string, error)
	// Forge returns the real object to create for s.
	Forge(ctx context.Context, s S) (R, error)
	// Created is told that r was just created for s.
	Created(s S, r R)
	// CreateFailed is told that the API server refused to create s's real
	// object; the error it returns, if any, has the create retried.
	CreateFailed(s S, err error) error
	// Sync brings s's own existing real object and s's status in line
	// with each other: which one follows the other is the kind's choice.
	// A *WriteLater error defers the status write.
	Sync(ctx context.Context, s S, have R) error
	// Conflict is told that a real object of s's name exists and is not
	// s's own; it is left untouched.
	Conflict(s S, msg string)
	// Refused is told that s gets no real object, and why (Refusal's
	// message); its real object, if any, is being deleted.
	Refused(s S, msg string)
}

// WriteLater is returned by ShadowKind.Sync when the shadow's status is
// about to change again, so that writing it now would be a write for a
// state nobody will see: the reconciler writes nothing and looks again
// After from now (or at the next event, whichever comes first).
type WriteLater struct{ After time.Duration }

func (w *WriteLater) Error() string { return fmt.Sprintf("status written in %s", w.After) }

// ShadowReconciler keeps, for every shadow object S, the real object R of
// the same name and namespace, controlled by it through an owner
// reference; see ShadowKind for what each kind decides.
type ShadowReconciler[S, R client.Object] struct {
	Client client.Client
	// APIReader reads around the cache, in the one case where the cache
	// cannot answer: a create that collides with an object the cache does
	// not hold (its labels are not the ones the cache selects on, or the
	// cache lags behind our own earlier create).
	APIReader client.Reader
	Kind      ShadowKind[S, R]
	// DeleteWithShadow deletes the real object as soon as its shadow is
	// being deleted; otherwise it goes only once the shadow is gone.
	DeleteWithShadow bool
	// ConflictRetry is how often a conflict is looked at again (0: only on
	// the next event of the shadow or of the other object).
	ConflictRetry time.Duration
}

// Reconcile brings the real object of one shadow in line with it and
// writes the shadow's status. Order: the shadow (gone or going: its real
// object goes too), its refusal, the real object, then the status.
func (r *ShadowReconciler[S, R]) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	s := r.Kind.NewShadow()
	if err := r.Client.Get(ctx, req.NamespacedName, s); err != nil {
		if apierrors.IsNotFound(err) {
			return ctrl.Result{}, r.deleteOwned(ctx, req.NamespacedName, "")
		}
		return ctrl.Result{}, err
	}
	if !s.GetDeletionTimestamp().IsZero() {
		// Keeping the real object up to date, or recreating it, would only
		// race the deletion of both.
		if r.DeleteWithShadow {
			return ctrl.Result{}, r.deleteOwned(ctx, req.NamespacedName, s.GetUID())
		}
		return ctrl.Result{}, nil
	}
	before := s.DeepCopyObject().(client.Object)
	conflict, err := r.ensure(ctx, s)
	var later *WriteLater
	if errors.As(err, &later) {
		return ctrl.Result{RequeueAfter: later.After}, nil
	}
	if werr := PatchStatus(ctx, r.Client, s, before); werr != nil && err == nil {
		err = werr
	}
	if conflict && err == nil && r.ConflictRetry > 0 {
		return ctrl.Result{RequeueAfter: r.ConflictRetry}, nil
	}
	return ctrl.Result{}, err
}

// ensure makes the real object of s exist as s's kind wants it; conflict
// tells that another object holds its name.
func (r *ShadowReconciler[S, R]) ensure(ctx context.Context, s S) (conflict bool, err error) {
	key := client.ObjectKeyFromObject(s)
	msg, err := r.Kind.Refusal(ctx, s)
	if err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if msg != "" {
		r.Kind.Refused(s, msg)
		return false, r.deleteOwned(ctx, key, s.GetUID())
	}
	have := r.Kind.NewReal()
	switch err := r.Client.Get(ctx, key, have); {
	case apierrors.IsNotFound(err):
		return r.create(ctx, s)
	case err != nil:
		return false, err
	}
	return r.existing(ctx, s, have)
}

// create creates the real object. A collision means the cache did not
// hold the existing object; only this rare path reads the API server
// directly.
func (r *ShadowReconciler[S, R]) create(ctx context.Context, s S) (bool, error) {
	want, err := r.Kind.Forge(ctx, s)
	if err != nil {
		return false, err
	}
	err = r.Client.Create(ctx, want)
	switch {
	case err == nil:
		r.Kind.Created(s, want)
		return false, nil
	case apierrors.IsAlreadyExists(err):
		have := r.Kind.NewReal()
		if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(s), have); err != nil {
			if apierrors.IsNotFound(err) {
				return false, fmt.Errorf("%s %s existed at create time and is gone now: retrying", r.kindOf(want), client.ObjectKeyFromObject(s))
			}
			return false, err
		}
		return r.existing(ctx, s, have)
	case apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause):
		// The namespace goes, the shadow with it: retrying would only spin
		// until the namespace controller deletes it.
		log.FromContext(ctx).V(1).Info("not creating the " + r.kindOf(want) + ": its namespace is terminating")
		return false, nil
	}
	return false, r.Kind.CreateFailed(s, err)
}

// existing hands s's own real object to Sync and reports any other one as
// a conflict.
func (r *ShadowReconciler[S, R]) existing(ctx context.Context, s S, have R) (bool, error) {
	ref := metav1.GetControllerOf(have)
	if ref == nil || ref.UID != s.GetUID() {
		owner := "no controller"
		if ref != nil {
			owner = fmt.Sprintf("controlled by %s %s (uid %s)", ref.Kind, ref.Name, ref.UID)
		}
		r.Kind.Conflict(s, fmt.Sprintf("%s %s exists with %s, not this %s (uid %s); it is left untouched",
			r.kindOf(have), have.GetName(), owner, r.kindOf(s), s.GetUID()))
		return true, nil
	}
	return false, r.Kind.Sync(ctx, s, have)
}

// deleteOwned deletes the real object of a shadow that is gone or going
// (uid "" when it is gone and its UID unknown), or that must have none. The
// garbage collector would delete it too, through the owner reference, but
// only once it watches the shadow's kind, which it starts doing up to a
// discovery period (30 s) after the CRD appears; meanwhile a deleted
// ShadowPod's consumer would wait for its pod, and a withdrawn slice would
// still steer the provider's Service traffic.
func (r *ShadowReconciler[S, R]) deleteOwned(ctx context.Context, key types.NamespacedName, uid types.UID) error {
	have := r.Kind.NewReal()
	if err := r.Client.Get(ctx, key, have); err != nil {
		return client.IgnoreNotFound(err)
	}
	gvk, err := r.Client.GroupVersionKindFor(r.Kind.NewShadow())
	if err != nil {
		return err
	}
	ref := metav1.GetControllerOf(have)
	if ref == nil || ref.Kind != gvk.Kind || ref.APIVersion != gvk.GroupVersion().String() ||
		uid != "" && ref.UID != uid || !have.GetDeletionTimestamp().IsZero() {
		return nil
	}
	err = r.Client.Delete(ctx, have, client.Preconditions{UID: ptr.To(have.GetUID())})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}

// kindOf names obj's kind for messages, as the scheme knows it.
func (r *ShadowReconciler[S, R]) kindOf(obj client.Object) string {
	gvk, err := r.Client.GroupVersionKindFor(obj)
	if err != nil {
		return fmt.Sprintf("%T", obj)
	}
	return gvk.Kind
}
