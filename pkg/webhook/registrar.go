package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// probePath answers 200 to anyone, without a client certificate: other
// replicas call it to learn that the registered one answers.
const probePath = "/probe"

// probeTimeout bounds a probe: a replica that does not answer within it is
// taken for gone.
const probeTimeout = 3 * time.Second

// answerProbe is the handler of probePath.
func answerProbe(w http.ResponseWriter, _ *http.Request) {
	_, _ = w.Write([]byte("ok"))
}

// probeServer tells whether the server at base answers over TLS with a
// certificate caBundle trusts for its host, as the API server requires.
func probeServer(ctx context.Context, base string, caBundle []byte) error {
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caBundle) {
		return errors.New("its caBundle holds no certificate")
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}, DisableKeepAlives: true}
	defer transport.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+probePath, nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: transport}).Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %s", probePath, resp.Status)
	}
	return nil
}

// registrar keeps the webhook configurations naming a replica that answers,
// with a caBundle trusting what it serves. It runs on every replica, not
// only the leader: the API server calls whichever replica the
// configurations name, and with failurePolicy Fail a replica gone leaves
// every pod creation in offloaded namespaces failing until another takes
// its place.
//
// At start a replica registers itself: a restarted manager has a new port
// and CA, and must not leave the API server calling the old ones. Then,
// every interval, it checks the registration: its own is kept up to date
// (a renewed CA); another replica's is left alone while that replica
// answers a probe over TLS trusting the registered caBundle, and replaced
// by its own once it does not. Of two replicas finding the registered one
// gone, the API server's optimistic concurrency lets the first writer win;
// the other then finds a live replica registered.
//
// Each replica must advertise an address of its own (a pod IP, not a
// Service): the URL tells which replica is registered.
type registrar struct {
	reader client.Reader
	writer client.Client
	// base is this replica's https://host:port.
	base     string
	keys     *servingKeys
	interval time.Duration
	// probe tells whether another replica answers; probeServer but in
	// tests.
	probe func(ctx context.Context, base string, caBundle []byte) error
	log   logr.Logger
}

var _ manager.LeaderElectionRunnable = (*registrar)(nil)

// NeedLeaderElection is false: see the type's comment.
func (r *registrar) NeedLeaderElection() bool { return false }

// Start registers this replica, retrying for a while (an error, say no
// right to write the configurations, stops the manager, which says so),
// then checks the registration until ctx ends.
func (r *registrar) Start(ctx context.Context) error {
	var last error
	err := wait.ExponentialBackoffWithContext(ctx, wait.Backoff{Duration: 200 * time.Millisecond, Factor: 2, Steps: 8, Cap: 5 * time.Second},
		func(ctx context.Context) (bool, error) {
			bundle := r.keys.bundle()
			last = r.write(ctx, bundle)
			if last != nil {
				r.log.Error(last, "registering the admission webhooks, will retry")
				return false, nil
			}
			r.keys.markPublished(bundle, time.Now())
			return true, nil
		})
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("registering the admission webhooks: %w", last)
	}
	r.log.Info("admission webhooks registered", "url", r.base)

	timer := time.NewTimer(r.wait())
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
		r.check(ctx)
		timer.Reset(r.wait())
	}
}

// wait is the time to the next check: the interval, or less when the
// serving certificate is due for a step of its renewal.
func (r *registrar) wait() time.Duration {
	return max(min(r.interval, time.Until(r.keys.nextEvent())), 10*time.Millisecond)
}

// check advances the certificate's renewal and reconciles the registration.
func (r *registrar) check(ctx context.Context) {
	did, err := r.keys.advance(time.Now())
	if err != nil {
		r.log.Error(err, "renewing the webhook serving certificate, will retry")
	} else if did != "" {
		r.log.Info(did)
	}
	bundle := r.keys.bundle()
	if err := r.reconcile(ctx, bundle); err != nil {
		if ctx.Err() == nil {
			r.log.Error(err, "checking the admission webhooks' registration, will retry")
		}
		return
	}
	r.keys.markPublished(bundle, time.Now())
}

// endpoint is where one webhook of the configurations sends the API server.
type endpoint struct {
	url      string
	caBundle []byte
}

// endpoints are the configurations' webhooks by name; a webhook without a
// URL (a Service reference nobody here wrote) has an empty one.
func endpoints(m *admissionv1.MutatingWebhookConfiguration, v *admissionv1.ValidatingWebhookConfiguration) map[string]endpoint {
	out := map[string]endpoint{}
	add := func(name string, c admissionv1.WebhookClientConfig) {
		e := endpoint{caBundle: c.CABundle}
		if c.URL != nil {
			e.url = *c.URL
		}
		out[name] = e
	}
	for _, w := range m.Webhooks {
		add(w.Name, w.ClientConfig)
	}
	for _, w := range v.Webhooks {
		add(w.Name, w.ClientConfig)
	}
	return out
}

// baseOf is the scheme and host of a webhook URL, "" if it has none.
func baseOf(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return ""
	}
	return p.Scheme + "://" + p.Host
}

// reconcile keeps the registration naming a replica that answers (see the
// type's comment), writing this replica's configurations with bundle when
// it must.
func (r *registrar) reconcile(ctx context.Context, bundle []byte) error {
	m := &admissionv1.MutatingWebhookConfiguration{}
	v := &admissionv1.ValidatingWebhookConfiguration{}
	for _, o := range []struct {
		name string
		obj  client.Object
	}{{MutatingConfigurationName, m}, {ValidatingConfigurationName, v}} {
		if err := r.reader.Get(ctx, client.ObjectKey{Name: o.name}, o.obj); err != nil {
			if apierrors.IsNotFound(err) {
				r.log.Info("admission webhooks not registered: registering this replica")
				return r.write(ctx, bundle)
			}
			return err
		}
	}
	wantM, wantV := configurations(r.base, bundle)
	want, got := endpoints(wantM, wantV), endpoints(m, v)
	// Written over what was read: if another replica wrote since, the
	// update fails on its resourceVersion and the next check judges anew.
	replace := func() error {
		m.Labels, m.Webhooks = wantM.Labels, wantM.Webhooks
		if err := r.writer.Update(ctx, m); err != nil {
			return err
		}
		v.Labels, v.Webhooks = wantV.Labels, wantV.Webhooks
		return r.writer.Update(ctx, v)
	}

	// Others' endpoints, each probed once.
	others := map[string][]byte{}
	for name, e := range got {
		base := baseOf(e.url)
		if base != r.base {
			others[base] = e.caBundle
			continue
		}
		if w, ok := want[name]; !ok || w.url != e.url || !bytes.Equal(w.caBundle, e.caBundle) {
			// Ours, but outdated: a renewed CA, or a registration left
			// by an earlier run at the same address.
			return replace()
		}
	}
	if len(others) == 0 {
		if len(got) != len(want) {
			return replace()
		}
		return nil
	}
	for base, caBundle := range others {
		if base == "" {
			r.log.Info("a registered admission webhook names no URL: registering this replica")
			return replace()
		}
		if err := r.probe(ctx, base, caBundle); err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			r.log.Info("the registered webhook server does not answer: registering this replica", "registered", base, "error", err.Error())
			return replace()
		}
	}
	return nil
}

// write registers this replica with bundle.
func (r *registrar) write(ctx context.Context, bundle []byte) error {
	m, v := configurations(r.base, bundle)
	if err := upsert(ctx, r.reader, r.writer, m, func(got, want *admissionv1.MutatingWebhookConfiguration) {
		got.Labels, got.Webhooks = want.Labels, want.Webhooks
	}); err != nil {
		return err
	}
	return upsert(ctx, r.reader, r.writer, v, func(got, want *admissionv1.ValidatingWebhookConfiguration) {
		got.Labels, got.Webhooks = want.Labels, want.Webhooks
	})
}

// upsert creates want, or updates the stored object with set. The stored
// object is read around the cache: the manager never needs to watch these.
// The update carries the resourceVersion read, so of two replicas
// registering at once one fails and checks again.
func upsert[T client.Object](ctx context.Context, reader client.Reader, writer client.Client, want T, set func(got, want T)) error {
	got := want.DeepCopyObject().(T)
	err := reader.Get(ctx, client.ObjectKeyFromObject(want), got)
	if apierrors.IsNotFound(err) {
		return writer.Create(ctx, want)
	}
	if err != nil {
		return err
	}
	set(got, want)
	return writer.Update(ctx, got)
}
