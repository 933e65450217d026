package webhook

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-logr/logr"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/kit"
)

// ServiceRef names the Service in front of the webhook server when it runs
// in the cluster: the chart installs the webhook configurations, calling the
// server through that Service, and the manager only keeps their caBundle
// trusting the certificate every replica serves.
type ServiceRef struct {
	Namespace string
	Name      string
}

// ParseServiceRef reads NAMESPACE/NAME.
func ParseServiceRef(s string) (*ServiceRef, error) {
	ns, name, ok := strings.Cut(s, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, fmt.Errorf("%q is not NAMESPACE/NAME", s)
	}
	return &ServiceRef{Namespace: ns, Name: name}, nil
}

func (s ServiceRef) String() string { return s.Namespace + "/" + s.Name }

// dnsNames are the names the API server may call the Service by.
func (s ServiceRef) dnsNames() []string {
	svc := s.Name + "." + s.Namespace + ".svc"
	return []string{svc, svc + ".cluster.local", s.Name + "." + s.Namespace, s.Name}
}

// SecretName is the Secret holding the serving keys of the Service named
// name.
func SecretName(name string) string { return name + "-certs" }

func (s ServiceRef) secret() client.ObjectKey {
	return client.ObjectKey{Namespace: s.Namespace, Name: SecretName(s.Name)}
}

// Keys of a CA that left the keys at a switch but stays in the caBundle for
// a while: replicas other than the leader learn of the switch only at their
// next read of the Secret, and serve the old certificate until then.
const (
	secretRetiredCA   = "retired-ca.crt"
	retiredAnnotation = "liqo.io/webhook-ca-retired-until"
)

// certPublisher, on the leader, keeps the Secret's serving keys renewed
// and the chart's webhook configurations trusting them. Its state lives
// in the Secret alone, so a new leader carries a renewal on.
type certPublisher struct {
	reader   client.Reader
	writer   client.Client
	service  ServiceRef
	owner    kit.InstallOwner
	lifetime time.Duration
	interval time.Duration
	// lag is how long replicas may serve a certificate after the Secret
	// moved past it.
	lag time.Duration
	// mutating and validating name the configurations (the constants but
	// in tests, whose cluster has the local-process ones too).
	mutating, validating string
	log                  logr.Logger
}

var _ manager.LeaderElectionRunnable = (*certPublisher)(nil)

func (p *certPublisher) NeedLeaderElection() bool { return true }

// Start syncs until ctx ends, at the interval or sooner when the keys are
// due for a step of their renewal.
func (p *certPublisher) Start(ctx context.Context) error {
	var next time.Duration
	// Sliding: the delay is asked for after each sync, so it is the one
	// that sync chose. Until ends only with ctx, which is a normal end.
	_ = wait.DelayFunc(func() time.Duration { return max(next, 10*time.Millisecond) }).Until(ctx, true, true, func(ctx context.Context) (bool, error) {
		var err error
		next, err = p.sync(ctx, time.Now())
		if err != nil {
			if ctx.Err() == nil {
				p.log.Error(err, "keeping the webhook serving certificate and caBundle, will retry")
			}
			next = p.interval
		}
		return false, nil
	})
	return nil
}

// sync makes, renews and publishes the keys as due at now, and returns
// the time to its next step.
func (p *certPublisher) sync(ctx context.Context, now time.Time) (time.Duration, error) {
	s := &corev1.Secret{}
	err := p.reader.Get(ctx, p.service.secret(), s)
	var k *servingKeys
	switch {
	case apierrors.IsNotFound(err):
		if k, err = newServingKeys(p.service.dnsNames(), p.lifetime, now); err != nil {
			return 0, err
		}
		s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: p.service.secret().Name, Namespace: p.service.Namespace,
			Labels: map[string]string{consts.ManagedByLabel: consts.ManagedByValue}}}
		p.owner.Own(s)
		if err := k.toSecret(s); err != nil {
			return 0, err
		}
		if err := p.writer.Create(ctx, s); err != nil {
			return 0, fmt.Errorf("creating Secret %s: %w", p.service.secret(), err)
		}
		p.log.Info("made the webhook serving certificate", "secret", p.service.secret().String())
	case err != nil:
		return 0, err
	default:
		if k, err = keysFromSecret(s, p.service.dnsNames(), p.lifetime); err != nil {
			// Unreadable (edited by hand?): new keys, published before
			// they are served by the next step.
			p.log.Error(err, "the webhook serving keys are unreadable: making new ones", "secret", p.service.secret().String())
			if k, err = newServingKeys(p.service.dnsNames(), p.lifetime, now); err != nil {
				return 0, err
			}
		}
	}

	before := bytes.Clone(k.current.caPEM)
	did, err := k.advance(now)
	if err != nil {
		return 0, err
	}
	retired, until := s.Data[secretRetiredCA], retiredUntil(s)
	if did != "" {
		p.log.Info(did)
		if !bytes.Equal(before, k.current.caPEM) {
			retired, until = before, now.Add(p.lag)
		}
	}
	if !now.Before(until) {
		retired = nil
	}
	bundle := k.bundle()
	if retired != nil {
		bundle = append(bundle, retired...)
	}
	if err := p.publish(ctx, bundle); err != nil {
		return 0, err
	}
	k.markPublished(bundle, now)

	want := s.DeepCopy()
	if err := k.toSecret(want); err != nil {
		return 0, err
	}
	if retired != nil {
		want.Data[secretRetiredCA] = retired
		want.Annotations[retiredAnnotation] = until.UTC().Format(time.RFC3339Nano)
	} else {
		delete(want.Annotations, retiredAnnotation)
	}
	if !equalSecret(s, want) {
		// With the resourceVersion read: a leader that lost its lease
		// meanwhile fails here instead of undoing its successor's step.
		if err := p.writer.Update(ctx, want); err != nil {
			return 0, fmt.Errorf("updating Secret %s: %w", p.service.secret(), err)
		}
	}

	wait := min(p.interval, k.nextEvent().Sub(now))
	if retired != nil {
		wait = min(wait, until.Sub(now))
	}
	return wait, nil
}

func retiredUntil(s *corev1.Secret) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s.Annotations[retiredAnnotation])
	if err != nil {
		return time.Time{}
	}
	return t
}

func equalSecret(a, b *corev1.Secret) bool {
	if len(a.Data) != len(b.Data) || len(a.Annotations) != len(b.Annotations) {
		return false
	}
	for k, v := range a.Data {
		if !bytes.Equal(v, b.Data[k]) {
			return false
		}
	}
	for k, v := range a.Annotations {
		if b.Annotations[k] != v {
			return false
		}
	}
	return true
}

// ourWebhooks are the webhooks whose caBundle the publisher owns.
var ourWebhooks = map[string]bool{PodWebhookName: true, DaemonSetWebhookName: true, ShadowPodWebhookName: true, ReflectedWebhookName: true,
	ReplicaWebhookName: true, EventWebhookName: true}

// publish writes bundle into our webhooks of the chart's configurations,
// leaving everything else in them (service, rules) as the chart made it.
func (p *certPublisher) publish(ctx context.Context, bundle []byte) error {
	m := &admissionv1.MutatingWebhookConfiguration{}
	if err := p.reader.Get(ctx, client.ObjectKey{Name: p.mutating}, m); err != nil {
		return configurationErr(p.mutating, err)
	}
	changed := false
	for i := range m.Webhooks {
		if w := &m.Webhooks[i]; ourWebhooks[w.Name] && !bytes.Equal(w.ClientConfig.CABundle, bundle) {
			w.ClientConfig.CABundle, changed = bundle, true
		}
	}
	if changed {
		if err := p.writer.Update(ctx, m); err != nil {
			return err
		}
	}
	v := &admissionv1.ValidatingWebhookConfiguration{}
	if err := p.reader.Get(ctx, client.ObjectKey{Name: p.validating}, v); err != nil {
		return configurationErr(p.validating, err)
	}
	changed = false
	for i := range v.Webhooks {
		if w := &v.Webhooks[i]; ourWebhooks[w.Name] && !bytes.Equal(w.ClientConfig.CABundle, bundle) {
			w.ClientConfig.CABundle, changed = bundle, true
		}
	}
	if changed {
		return p.writer.Update(ctx, v)
	}
	return nil
}

func configurationErr(name string, err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("webhook configuration %s not found: in-cluster, the Helm chart installs it (liqoctl install)", name)
	}
	return err
}

// certFollower, on every replica, serves the Secret's current certificate.
type certFollower struct {
	reader   client.Reader
	secret   client.ObjectKey
	keys     *servingKeys
	interval time.Duration
	log      logr.Logger
}

var _ manager.LeaderElectionRunnable = (*certFollower)(nil)

func (f *certFollower) NeedLeaderElection() bool { return false }

func (f *certFollower) Start(ctx context.Context) error {
	logged := false
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		s := &corev1.Secret{}
		err := f.reader.Get(ctx, f.secret, s)
		if err == nil {
			err = f.keys.follow(s)
		}
		if err != nil && ctx.Err() == nil && (!logged || f.keys.ready()) {
			// Once while waiting for the leader's first certificate.
			f.log.Info("no webhook serving certificate to serve yet, will retry", "secret", f.secret.String(), "error", err.Error())
			logged = true
		}
	}, f.interval)
	return nil
}
