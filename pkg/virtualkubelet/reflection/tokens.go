package reflection

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
)

// DefaultTokenRefreshFraction is the part of a token's lifetime after
// which it is replaced, as the kubelet does for projected tokens.
const DefaultTokenRefreshFraction = 0.8

// tokenOptions tune the token reflection; the zero value is the default.
type tokenOptions struct {
	// RefreshFraction of a token's lifetime after which it is replaced
	// (DefaultTokenRefreshFraction when 0). The TokenRequest API issues
	// nothing shorter than 10 minutes: tests refresh sooner with this.
	RefreshFraction float64
	// Clock times the refreshes (the real clock when nil).
	Clock clock.WithTicker
}

// tokens keeps, in the twin namespaces on the provider, the Secrets that
// the offloaded pods mount instead of their projected ServiceAccount
// tokens (forge.TokenSecret): one per local namespace, ServiceAccount and
// audience, whatever the number of pods, holding a token that the local
// TokenRequest API issued for the ServiceAccount (not bound to a pod, so
// that one serves them all), replaced after RefreshFraction of its
// lifetime. A Secret no local pod of the provider's virtual nodes needs any
// more is deleted when its refresh comes, rather than refreshed: its token
// stays valid until then anyway, and the pods' deletions need no
// bookkeeping. One keeper serves all the provider's nodes, whose pods share
// the twin namespaces and so the Secrets: a node's keeper of its own would
// delete the Secrets only another node's pods mount.
//
// Only Secrets carrying the token marks of this cluster are written; a
// pod whose Secret name is taken by another object gets a tokenRefusal.
// ensure and adopt may be called from many goroutines; run processes the
// refreshes until its context is done.
type tokens struct {
	local      kubernetes.Interface
	remote     client.Client
	pods       localPods
	clusterID  string
	providerID string
	fraction   float64
	clock      clock.WithTicker
	queue      workqueue.TypedRateLimitingInterface[tokenKey]
	logger     klog.Logger

	mu      sync.Mutex
	entries map[tokenKey]*tokenEntry
}

// tokenKey names a token Secret: its twin namespace and name.
type tokenKey struct{ namespace, name string }

// tokenEntry is what is known of one token Secret. Its mutex serializes
// the writes of the Secret, so that the pods of one ServiceAccount
// arriving together cost one TokenRequest.
type tokenEntry struct {
	mu    sync.Mutex
	ref   forge.TokenRef
	local string // the local namespace
	// issued and expiry date the token the Secret holds; zero until the
	// Secret has been written or read.
	issued, expiry time.Time
	// gone is set once the entry left the map: a caller holding it looks
	// again.
	gone bool
}

// tokenRefusal is a reason a pod cannot get its token that its owner
// must see (the pod backs off with it); other errors are retried quietly.
type tokenRefusal struct{ msg string }

func (e *tokenRefusal) Error() string { return e.msg }

// localPods lists the local pods of a namespace that may need a token: those
// bound to the provider's virtual nodes. complete is false while some of
// them may be missing from the list.
type localPods interface {
	inNamespace(namespace string) (pods []*corev1.Pod, complete bool)
}

// newTokens is the token reflection of one provider: local issues the
// tokens, remote writes the Secrets, pods lists the local pods of the
// provider's virtual nodes.
func newTokens(local kubernetes.Interface, remote client.Client, pods localPods,
	localClusterID, providerID string, logger klog.Logger, opts tokenOptions) *tokens {
	if opts.RefreshFraction <= 0 || opts.RefreshFraction >= 1 {
		opts.RefreshFraction = DefaultTokenRefreshFraction
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	return &tokens{
		local: local, remote: remote, pods: pods, clusterID: localClusterID, providerID: providerID,
		fraction: opts.RefreshFraction, clock: opts.Clock, logger: logger.WithValues("reflector", "tokens"),
		queue: workqueue.NewTypedRateLimitingQueueWithConfig(
			workqueue.NewTypedItemExponentialFailureRateLimiter[tokenKey](time.Second, 5*time.Minute),
			workqueue.TypedRateLimitingQueueConfig[tokenKey]{Name: "tokens-" + providerID, Clock: opts.Clock}),
		entries: map[tokenKey]*tokenEntry{},
	}
}

// run refreshes the tokens when they are due until ctx is done.
func (t *tokens) run(ctx context.Context) {
	process(ctx, t.queue, 1, func(ctx context.Context, key tokenKey) (time.Duration, error) {
		return 0, t.refresh(ctx, key)
	}, func(key tokenKey, err error) {
		t.logger.Error(err, "refreshing a token; retrying", "secret", key.namespace+"/"+key.name)
	})
}

// ensure makes sure the token Secrets a local pod mounts once offloaded
// exist in its twin namespace, remoteNamespace, with a valid token.
func (t *tokens) ensure(ctx context.Context, pod *corev1.Pod, remoteNamespace string) error {
	for _, ref := range forge.PodTokens(&pod.Spec) {
		if err := t.ensureOne(ctx, pod.Namespace, remoteNamespace, ref); err != nil {
			return err
		}
	}
	return nil
}

func (t *tokens) ensureOne(ctx context.Context, localNS, remoteNS string, ref forge.TokenRef) error {
	key := tokenKey{remoteNS, ref.SecretName()}
	for {
		if done, err := t.ensureEntry(ctx, key, t.entry(key, localNS, ref)); done {
			return err
		}
	}
}

// ensureEntry is ensureOne on one entry; false when the entry left the
// map meanwhile.
func (t *tokens) ensureEntry(ctx context.Context, key tokenKey, e *tokenEntry) (bool, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return false, nil
	}
	if t.clock.Now().Before(e.expiry) {
		// Written or read before, and refreshed by the queue since.
		return true, nil
	}
	return true, t.write(ctx, key, e, false)
}

// entry returns the entry of a token Secret, made if missing.
func (t *tokens) entry(key tokenKey, localNS string, ref forge.TokenRef) *tokenEntry {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entries[key]
	if !ok {
		e = &tokenEntry{ref: ref, local: localNS}
		t.entries[key] = e
	}
	return e
}

// adopt plans the refresh of the token Secrets already in a twin
// namespace: after a restart nothing else would refresh the tokens of
// the pods offloaded before it. Those no pod needs are deleted when due.
func (t *tokens) adopt(ctx context.Context, localNS, remoteNS string) error {
	var list corev1.SecretList
	if err := t.remote.List(ctx, &list, client.InNamespace(remoteNS), client.MatchingLabels{
		forge.TokenLabel: "true", consts.ManagedByLabel: consts.ManagedByValue, consts.OriginClusterIDLabel: t.clusterID,
	}); err != nil {
		return fmt.Errorf("listing the token Secrets of %s: %w", remoteNS, err)
	}
	for i := range list.Items {
		s := &list.Items[i]
		ref := forge.TokenRef{ServiceAccount: s.Annotations[forge.TokenServiceAccountAnnotation],
			Audience: s.Annotations[forge.TokenAudienceAnnotation], ExpirationSeconds: forge.DefaultTokenExpirationSeconds}
		key := tokenKey{remoteNS, s.Name}
		if ref.ServiceAccount == "" || ref.SecretName() != s.Name {
			continue
		}
		e := t.entry(key, localNS, ref)
		e.mu.Lock()
		if !e.gone && e.expiry.IsZero() {
			e.issued, e.expiry, _ = forge.TokenLifetime(s)
		}
		e.mu.Unlock()
		t.schedule(key, e)
	}
	return nil
}

// forget drops what is known of the token Secrets of a twin namespace
// whose reflection stopped: the namespace may be deleted with them, and
// made again under the same name (EnforceSameName) by a later offloading,
// whose pods must then get their Secrets written again, not assumed.
// Refreshes still queued find their entries gone.
func (t *tokens) forget(remoteNS string) {
	var gone []*tokenEntry
	t.mu.Lock()
	for key, e := range t.entries {
		if key.namespace == remoteNS {
			gone = append(gone, e)
			delete(t.entries, key)
		}
	}
	t.mu.Unlock()
	// e.mu after t.mu is released: drop takes them the other way round.
	for _, e := range gone {
		e.mu.Lock()
		e.gone = true
		e.mu.Unlock()
	}
}

// schedule plans the refresh of a token; e.mu need not be held, a
// refresh that comes early plans itself again.
func (t *tokens) schedule(key tokenKey, e *tokenEntry) {
	t.queue.AddAfter(key, forge.RefreshTime(e.issued, e.expiry, t.fraction).Sub(t.clock.Now()))
}

// refresh replaces a token when it is due, or deletes its Secret when no
// pod needs it any more.
func (t *tokens) refresh(ctx context.Context, key tokenKey) error {
	t.mu.Lock()
	e := t.entries[key]
	t.mu.Unlock()
	if e == nil {
		return nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gone {
		return nil
	}
	exp, used := t.neededBy(e.local, e.ref)
	if !used {
		if err := t.deleteSecret(ctx, key, e.ref); err != nil {
			return err
		}
		t.drop(key, e)
		return nil
	}
	e.ref.ExpirationSeconds = exp
	if due := forge.RefreshTime(e.issued, e.expiry, t.fraction); t.clock.Now().Before(due) {
		t.queue.AddAfter(key, due.Sub(t.clock.Now()))
		return nil
	}
	err := t.write(ctx, key, e, true)
	var refused *tokenRefusal
	if errors.As(err, &refused) {
		// Someone else's object took the name: not ours to refresh. The
		// pods keep whatever it holds; new ones back off.
		t.logger.Info("not refreshing a token", "secret", key.namespace+"/"+key.name, "reason", refused.msg)
		t.drop(key, e)
		return nil
	}
	return err
}

// neededBy reports whether a local pod of the provider's virtual nodes in
// namespace mounts ref's token, and the shortest lifetime the pods ask
// for. While the pods are not all known the token counts as needed: a
// refresh deletes the Secrets no pod needs.
func (t *tokens) neededBy(namespace string, ref forge.TokenRef) (int64, bool) {
	pods, complete := t.pods.inNamespace(namespace)
	exp, used := ref.ExpirationSeconds, !complete
	for _, p := range pods {
		for _, r := range forge.PodTokens(&p.Spec) {
			if r.ServiceAccount == ref.ServiceAccount && r.Audience == ref.Audience {
				if !used || r.ExpirationSeconds < exp {
					exp = r.ExpirationSeconds
				}
				used = true
			}
		}
	}
	return exp, used
}

func (t *tokens) drop(key tokenKey, e *tokenEntry) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.gone = true
	if t.entries[key] == e {
		delete(t.entries, key)
	}
}

// write makes the token Secret hold a valid token: it adopts the current
// one if it is not yet due for a refresh (unless force), or requests a
// new one. e.mu is held.
func (t *tokens) write(ctx context.Context, key tokenKey, e *tokenEntry, force bool) error {
	current := &corev1.Secret{}
	err := t.remote.Get(ctx, client.ObjectKey{Namespace: key.namespace, Name: key.name}, current)
	switch {
	case apierrors.IsNotFound(err):
		current = nil
	case err != nil:
		return err
	case !forge.IsTokenSecret(current, e.ref, t.clusterID):
		return &tokenRefusal{fmt.Sprintf("Secret %s/%s, which would hold the token of ServiceAccount %s, exists on cluster %s and was not created by this cluster",
			key.namespace, key.name, e.ref.ServiceAccount, t.providerID)}
	case !force:
		if issued, expiry, ok := forge.TokenLifetime(current); ok && t.clock.Now().Before(forge.RefreshTime(issued, expiry, t.fraction)) {
			e.issued, e.expiry = issued, expiry
			t.schedule(key, e)
			return nil
		}
	}

	issued := t.clock.Now()
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		ExpirationSeconds: ptr.To(e.ref.ExpirationSeconds)}}
	if e.ref.Audience != "" {
		req.Spec.Audiences = []string{e.ref.Audience}
	}
	tr, err := t.local.CoreV1().ServiceAccounts(e.local).CreateToken(ctx, e.ref.ServiceAccount, req, metav1.CreateOptions{})
	switch {
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err), apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return &tokenRefusal{fmt.Sprintf("requesting a token of ServiceAccount %s: %v", e.ref.ServiceAccount, err)}
	case err != nil:
		return fmt.Errorf("requesting a token of ServiceAccount %s/%s: %w", e.local, e.ref.ServiceAccount, err)
	}
	expiry := tr.Status.ExpirationTimestamp.Time
	want := forge.TokenSecret(e.ref, e.local, key.namespace, t.clusterID, []byte(tr.Status.Token), issued, expiry)
	if current == nil {
		err = t.remote.Create(ctx, want)
	} else {
		want.ResourceVersion = current.ResourceVersion
		err = t.remote.Update(ctx, want)
	}
	if err != nil {
		// A conflict (a concurrent write, never ours: e.mu is held) or a
		// Secret created meanwhile is sorted out by the retry.
		return fmt.Errorf("writing Secret %s/%s: %w", key.namespace, key.name, err)
	}
	// The wall clock's reading, not the token's own dates, decides: the
	// annotations are written at the second.
	e.issued, e.expiry = issued, expiry
	t.schedule(key, e)
	return nil
}

// deleteSecret removes a token Secret if it is ours. e.mu is held.
func (t *tokens) deleteSecret(ctx context.Context, key tokenKey, ref forge.TokenRef) error {
	current := &corev1.Secret{}
	if err := t.remote.Get(ctx, client.ObjectKey{Namespace: key.namespace, Name: key.name}, current); err != nil {
		return client.IgnoreNotFound(err)
	}
	if !forge.IsTokenSecret(current, ref, t.clusterID) {
		return nil
	}
	err := t.remote.Delete(ctx, current, client.Preconditions{UID: &current.UID})
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
