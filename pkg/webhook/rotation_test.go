package webhook

import (
	"crypto/x509"
	"os"
	"strings"
	"testing"
	"time"
)

// verifies tells whether the certificate k serves now verifies against
// bundle for k's host.
func verifies(t *testing.T, k *servingKeys, bundle []byte, at time.Time) bool {
	t.Helper()
	cert, err := k.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(bundle)
	_, err = cert.Leaf.Verify(x509.VerifyOptions{DNSName: k.names[0], Roots: pool, CurrentTime: at})
	return err == nil
}

// step advances k at the given time, failing the test on an error.
func step(t *testing.T, k *servingKeys, at time.Time) string {
	t.Helper()
	did, err := k.advance(at)
	if err != nil {
		t.Fatal(err)
	}
	return did
}

func served(t *testing.T, k *servingKeys) string {
	t.Helper()
	cert, err := k.GetCertificate(nil)
	if err != nil {
		t.Fatal(err)
	}
	return cert.Leaf.SerialNumber.String()
}

// TestServingKeysRenewal walks a renewal on a clock of its own: renewed at
// two thirds of the lifetime, the new CA published next to the old one
// before the new certificate is served, the old CA dropped after; what is
// served always verifies against the bundle published before.
func TestServingKeysRenewal(t *testing.T) {
	t0 := time.Now()
	at := t0.Add
	k, err := newServingKeys([]string{"127.0.0.1"}, 30*time.Second, t0)
	if err != nil {
		t.Fatal(err)
	}
	first, firstBundle := served(t, k), k.bundle()
	if got := k.nextEvent(); !got.Equal(at(20 * time.Second)) {
		t.Errorf("renewal due at %s, want two thirds of the lifetime", got.Sub(t0))
	}
	if did := step(t, k, at(19*time.Second)); did != "" {
		t.Errorf("before two thirds of the lifetime: %s", did)
	}
	if did := step(t, k, at(20*time.Second)); did == "" {
		t.Fatalf("no renewal at two thirds of the lifetime")
	}
	overlapBundle := k.bundle()
	if n := bundleCerts(overlapBundle); n != 2 || served(t, k) != first {
		t.Fatalf("during the overlap: %d CAs in the bundle, serving the first certificate: %v; want 2 and true", n, served(t, k) == first)
	}
	// A bundle without the new CA does not count as its publication.
	k.markPublished(firstBundle, at(21*time.Second))
	step(t, k, at(25*time.Second))
	if served(t, k) != first {
		t.Fatalf("the new certificate served before its CA was published")
	}
	k.markPublished(overlapBundle, at(21*time.Second))
	if got := k.nextEvent(); !got.Equal(at(24 * time.Second)) {
		t.Errorf("switch due at %s, want the publication and the overlap (3s)", got.Sub(t0))
	}
	step(t, k, at(23*time.Second))
	if served(t, k) != first {
		t.Fatalf("the new certificate served before the overlap passed")
	}
	if did := step(t, k, at(24*time.Second)); did == "" || served(t, k) == first {
		t.Fatalf("the new certificate not served after the overlap")
	}
	if !verifies(t, k, overlapBundle, at(24*time.Second)) || !verifies(t, k, k.bundle(), at(24*time.Second)) {
		t.Errorf("the new certificate does not verify against the published bundles")
	}
	if verifies(t, k, firstBundle, at(24*time.Second)) {
		t.Errorf("the new certificate verifies against the first CA alone")
	}
	if n := bundleCerts(k.bundle()); n != 1 {
		t.Errorf("after the switch the bundle holds %d CAs, want the new one alone", n)
	}
	if got := k.nextEvent(); !got.Equal(at(40 * time.Second)) {
		t.Errorf("next renewal due at %s, want two thirds of the new lifetime (40s)", got.Sub(t0))
	}
}

// TestServingKeysUnpublished: a renewal whose bundle never gets published
// (the API server unreachable) is served anyway an overlap before the old
// certificate expires, rather than an expired one.
func TestServingKeysUnpublished(t *testing.T) {
	t0 := time.Now()
	k, err := newServingKeys([]string{"webhook.example"}, 30*time.Second, t0)
	if err != nil {
		t.Fatal(err)
	}
	first := served(t, k)
	step(t, k, t0.Add(20*time.Second))
	step(t, k, t0.Add(26*time.Second))
	if served(t, k) != first {
		t.Fatalf("switched before the deadline without a publication")
	}
	if got := k.nextEvent(); !got.Equal(t0.Add(27 * time.Second)) {
		t.Errorf("deadline at %s, want an overlap before the expiry (27s)", got.Sub(t0))
	}
	step(t, k, t0.Add(27*time.Second))
	if served(t, k) == first {
		t.Fatalf("still serving the first certificate an overlap before it expires")
	}
}

func TestServingOptionsValidate(t *testing.T) {
	caFile := t.TempDir() + "/ca.crt"
	_, caPEM, err := servingCert([]string{"ca.example"}, time.Now(), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(caFile, caPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	notPEM := t.TempDir() + "/junk"
	if err := os.WriteFile(notPEM, []byte("junk"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		o    ServingOptions
		want string
	}{
		{"defaults", DefaultServingOptions(), ""},
		{"zero value", ServingOptions{}, ""},
		{"a client CA and names", ServingOptions{ClientCAFile: caFile, ClientNames: []string{"kube-apiserver"}}, ""},
		{"names without a CA", ServingOptions{ClientNames: []string{"kube-apiserver"}}, "--webhook-client-names needs --webhook-client-ca"},
		{"an empty name", ServingOptions{ClientCAFile: caFile, ClientNames: []string{""}}, "--webhook-client-names: empty name"},
		{"a missing CA file", ServingOptions{ClientCAFile: caFile + ".missing"}, "--webhook-client-ca"},
		{"a CA file without PEM", ServingOptions{ClientCAFile: notPEM}, "holds no PEM certificate"},
		{"a lifetime too short to renew", ServingOptions{CertLifetime: time.Second}, "--webhook-cert-lifetime must be at least"},
		{"a negative interval", ServingOptions{CheckInterval: -time.Second}, "--webhook-registration-check-interval must be positive"},
	}
	for _, tt := range tests {
		err := tt.o.Validate()
		if tt.want == "" && err != nil || tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
			t.Errorf("%s: Validate() = %v, want %q", tt.name, err, tt.want)
		}
	}
}
