package webhook

import (
	"context"
	"crypto/x509"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/testbed"
)

func TestParseServiceRef(t *testing.T) {
	for in, ok := range map[string]bool{"liqo/liqo-webhook": true, "liqo": false, "/x": false, "x/": false, "a/b/c": false} {
		r, err := ParseServiceRef(in)
		if (err == nil) != ok {
			t.Errorf("ParseServiceRef(%q) = %v, %v; want ok=%v", in, r, err, ok)
		}
		if ok && r.String() != in {
			t.Errorf("ParseServiceRef(%q).String() = %q", in, r.String())
		}
	}
}

// inClusterNamespace makes a namespace of the test's own.
func inClusterNamespace(t *testing.T) (context.Context, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "incluster-"}}
	if err := cl.Create(ctx, ns); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Delete(context.Background(), ns) })
	return ctx, ns.Name
}

// chartConfigurations installs, under names of their own, the webhook
// configurations the chart installs, aimed at no namespace and no object
// so that they never gate the other tests' writes.
func chartConfigurations(t *testing.T, ctx context.Context, svc ServiceRef, prefix string) (mutating, validating string) {
	t.Helper()
	m, v := ServiceConfigurations(svc)
	never := &metav1.LabelSelector{MatchLabels: map[string]string{"liqo.io/test-never": "match"}}
	m.Name, v.Name = prefix+"-mutation", prefix+"-validation"
	for i := range m.Webhooks {
		m.Webhooks[i].NamespaceSelector, m.Webhooks[i].ObjectSelector = never, never
	}
	for i := range v.Webhooks {
		v.Webhooks[i].NamespaceSelector, v.Webhooks[i].ObjectSelector = never, never
	}
	for _, o := range []client.Object{m, v} {
		if err := cl.Create(ctx, o); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cl.Delete(context.Background(), o) })
	}
	return m.Name, v.Name
}

// bundles are the caBundles of every webhook of the two configurations.
func bundles(t *testing.T, ctx context.Context, mutating, validating string) [][]byte {
	t.Helper()
	m := &admissionv1.MutatingWebhookConfiguration{}
	v := &admissionv1.ValidatingWebhookConfiguration{}
	if err := cl.Get(ctx, client.ObjectKey{Name: mutating}, m); err != nil {
		t.Fatal(err)
	}
	if err := cl.Get(ctx, client.ObjectKey{Name: validating}, v); err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	for _, w := range m.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	for _, w := range v.Webhooks {
		out = append(out, w.ClientConfig.CABundle)
	}
	return out
}

// TestInClusterRenewal walks the in-cluster serving keys through a
// renewal on a clock of its own, with a new publisher at every step (a new
// leader: the state is the Secret's alone). At every step, whatever a
// replica serves — the certificate of the Secret before the step, not yet
// followed, or after it — verifies, for the Service's DNS name, against
// the caBundle of every webhook in the configurations.
func TestInClusterRenewal(t *testing.T) {
	ctx, ns := inClusterNamespace(t)
	svc := ServiceRef{Namespace: ns, Name: "liqo-webhook"}
	mutating, validating := chartConfigurations(t, ctx, svc, "renewal-"+ns)
	const lifetime, lag = 30 * time.Second, 3 * time.Second
	publisher := func() *certPublisher {
		return &certPublisher{reader: cl, writer: cl, service: svc, lifetime: lifetime, interval: time.Hour, lag: lag,
			mutating: mutating, validating: validating, log: testbed.TestLogger()}
	}
	secret := func() *corev1.Secret {
		s := &corev1.Secret{}
		if err := cl.Get(ctx, svc.secret(), s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	served := func(s *corev1.Secret) *x509.Certificate {
		k := &servingKeys{}
		if err := k.follow(s); err != nil {
			t.Fatal(err)
		}
		c, err := k.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		return c.Leaf
	}
	verifiesAll := func(at time.Time, leaf *x509.Certificate) bool {
		for _, b := range bundles(t, ctx, mutating, validating) {
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(b) {
				return false
			}
			if _, err := leaf.Verify(x509.VerifyOptions{DNSName: "liqo-webhook." + ns + ".svc", Roots: pool, CurrentTime: at}); err != nil {
				return false
			}
		}
		return true
	}
	t0 := time.Now()
	var before *corev1.Secret
	step := func(at time.Duration) (after *corev1.Secret, wait time.Duration) {
		t.Helper()
		wait, err := publisher().sync(ctx, t0.Add(at))
		if err != nil {
			t.Fatalf("sync at %s: %v", at, err)
		}
		after = secret()
		for _, s := range []*corev1.Secret{before, after} {
			if s != nil && !verifiesAll(t0.Add(at), served(s)) {
				t.Fatalf("at %s a replica's certificate (serial %s) does not verify against the published bundles", at, served(s).SerialNumber)
			}
		}
		before = after
		return after, wait
	}

	first, wait := step(0)
	if wait != 20*time.Second {
		t.Errorf("after the first sync, next step in %s, want the renewal at two thirds of the lifetime (20s)", wait)
	}
	if again, _ := step(time.Second); again.ResourceVersion != first.ResourceVersion {
		t.Errorf("a sync with nothing to do rewrote the Secret")
	}
	renewing, _ := step(20 * time.Second)
	if n := bundleCerts(bundles(t, ctx, mutating, validating)[0]); n != 2 || served(renewing).SerialNumber.Cmp(served(first).SerialNumber) != 0 {
		t.Fatalf("renewing: %d CAs published (want 2), serving the first certificate: %v (want true)", n, served(renewing).SerialNumber.Cmp(served(first).SerialNumber) == 0)
	}
	switched, wait := step(23 * time.Second)
	if served(switched).SerialNumber.Cmp(served(first).SerialNumber) == 0 {
		t.Fatalf("the renewed certificate not served an overlap after its CA was published")
	}
	if n := bundleCerts(bundles(t, ctx, mutating, validating)[0]); n != 2 || wait != lag {
		t.Fatalf("just after the switch: %d CAs published, next step in %s; want the retired CA kept (2) for the lag (%s)", n, wait, lag)
	}
	step(23*time.Second + lag)
	for _, b := range bundles(t, ctx, mutating, validating) {
		if n := bundleCerts(b); n != 1 {
			t.Fatalf("after the lag: %d CAs published, want the new one alone", n)
		}
	}
	if verifiesAll(t0.Add(26*time.Second), served(first)) {
		t.Errorf("the first certificate still verifies after its CA retired")
	}
}

// TestInClusterSecretRepair: a Secret edited into garbage is replaced by
// new keys, published; configurations missing are named in the error.
func TestInClusterSecretRepair(t *testing.T) {
	ctx, ns := inClusterNamespace(t)
	svc := ServiceRef{Namespace: ns, Name: "liqo-webhook"}
	p := &certPublisher{reader: cl, writer: cl, service: svc, lifetime: time.Hour, interval: time.Hour, lag: time.Second,
		mutating: "repair-" + ns + "-mutation", validating: "repair-" + ns + "-validation", log: testbed.TestLogger()}
	if _, err := p.sync(ctx, time.Now()); err == nil || !strings.Contains(err.Error(), "not found: in-cluster, the Helm chart installs it") {
		t.Fatalf("without the configurations: %v; want an error naming the chart", err)
	}
	chartConfigurations(t, ctx, svc, "repair-"+ns)
	garbage := &corev1.Secret{}
	if err := cl.Get(ctx, svc.secret(), garbage); err != nil {
		t.Fatal(err)
	}
	garbage.Data = map[string][]byte{secretCert: []byte("not a certificate")}
	if err := cl.Update(ctx, garbage); err != nil {
		t.Fatal(err)
	}
	if _, err := p.sync(ctx, time.Now()); err != nil {
		t.Fatal(err)
	}
	s := &corev1.Secret{}
	if err := cl.Get(ctx, svc.secret(), s); err != nil {
		t.Fatal(err)
	}
	if _, err := keysFromSecret(s, svc.dnsNames(), time.Hour); err != nil {
		t.Fatalf("the Secret is still unreadable: %v", err)
	}
	for _, b := range bundles(t, ctx, p.mutating, p.validating) {
		if bundleCerts(b) != 1 || !strings.Contains(string(b), string(s.Data[secretCA])) {
			t.Fatalf("the configurations do not trust the new CA alone")
		}
	}
}
