package identity

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/testbed"
)

var cluster *testbed.Cluster

func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) { cluster = tb.Clusters[0] },
		testbed.ClusterSpec{Name: "identity", Nodes: []testbed.NodePool{{Count: 1}}})
}

func TestEnsureConcurrentCallersAgree(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := cluster.Client()
	ns := createNamespace(ctx, t, "liqo")
	const callers = 8
	keys := make([]*Keys, callers)
	errs := make([]error, callers)
	var wg sync.WaitGroup
	for i := range callers {
		wg.Go(func() { keys[i], errs[i] = Ensure(ctx, cs, ns) })
	}
	wg.Wait()
	for i := range callers {
		if errs[i] != nil {
			t.Fatalf("caller %d: %v", i, errs[i])
		}
		if !keys[i].Public.Equal(keys[0].Public) || !keys[i].Client.Equal(keys[0].Client) {
			t.Fatalf("caller %d got different key pairs", i)
		}
	}
	again, err := Ensure(ctx, cs, ns)
	if err != nil || !again.Public.Equal(keys[0].Public) || !again.Client.Equal(keys[0].Client) {
		t.Fatalf("a later call got other key pairs (%v)", err)
	}
}

// TestEnsureSeparatesClientKey: the TLS client key is a key pair of its own,
// in its own Secret, so what a provider's certificate authenticates and
// what gets copied into kubeconfigs is never the identity key.
func TestEnsureSeparatesClientKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := cluster.Client()
	ns := createNamespace(ctx, t, "separate")
	k, err := Ensure(ctx, cs, ns)
	if err != nil {
		t.Fatal(err)
	}
	if k.Client.Public().(ed25519.PublicKey).Equal(k.Public) {
		t.Fatal("the TLS client key is the identity key")
	}
	id, err := cs.CoreV1().Secrets(ns).Get(ctx, SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := cs.CoreV1().Secrets(ns).Get(ctx, ClientKeySecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(id.Data[publicKeyField], k.Public) || !bytes.Equal(client.Data[privateKeyField], k.Client) {
		t.Fatal("the Secrets do not hold the keys Ensure returned")
	}
	if bytes.Equal(id.Data[privateKeyField], client.Data[privateKeyField]) {
		t.Fatal("both Secrets hold the same private key")
	}
}

// TestEnsureRefusesIdentityAsClientKey: a client key Secret holding the
// identity key (copied by hand) would make every handshake signature a
// possible TLS signature: refused, naming the Secret to delete.
func TestEnsureRefusesIdentityAsClientKey(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := cluster.Client()
	ns := createNamespace(ctx, t, "copied")
	if _, err := Ensure(ctx, cs, ns); err != nil {
		t.Fatal(err)
	}
	id, err := cs.CoreV1().Secrets(ns).Get(ctx, SecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client, err := cs.CoreV1().Secrets(ns).Get(ctx, ClientKeySecretName, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	client.Data = id.Data
	if _, err := cs.CoreV1().Secrets(ns).Update(ctx, client, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	_, err = Ensure(ctx, cs, ns)
	if err == nil || !strings.Contains(err.Error(), "must differ from the identity") || !strings.Contains(err.Error(), ClientKeySecretName) {
		t.Fatalf("got %v, want an error naming %s", err, ClientKeySecretName)
	}
}

func TestEnsureRejectsCorruptSecret(t *testing.T) {
	for _, name := range []string{SecretName, ClientKeySecretName} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cs := cluster.Client()
			ns := createNamespace(ctx, t, "corrupt-"+strings.ReplaceAll(name, "liqo-cluster-", ""))
			if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
				ObjectMeta: metav1.ObjectMeta{Name: name},
				Data:       map[string][]byte{privateKeyField: []byte("short")},
			}, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err := Ensure(ctx, cs, ns); err == nil || !strings.Contains(err.Error(), name) {
				t.Fatalf("a corrupt secret %s was accepted or not named: %v", name, err)
			}
			// Nothing was overwritten: the user's object is left for them to inspect.
			s, err := cs.CoreV1().Secrets(ns).Get(ctx, name, metav1.GetOptions{})
			if err != nil || string(s.Data[privateKeyField]) != "short" {
				t.Fatalf("the corrupt secret was modified (%v)", err)
			}
		})
	}
}

func createNamespace(ctx context.Context, t *testing.T, name string) string {
	t.Helper()
	if _, err := cluster.Client().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// TestHandshake: a signature answers one handshake only. The old scheme (a
// signature over the raw nonce) and a signature made for another pair of
// clusters, another nonce or another client key do not verify.
func TestHandshake(t *testing.T) {
	consumer := mustKeys(t)
	intruder := mustKeys(t)
	nonce, err := NewNonce()
	if err != nil {
		t.Fatal(err)
	}
	clientKey, err := consumer.ClientPublicKey()
	if err != nil {
		t.Fatal(err)
	}
	good := Handshake{ConsumerID: "rome", ProviderID: "milan", Nonce: nonce, ClientKey: clientKey}
	sig, err := consumer.SignHandshake(good)
	if err != nil {
		t.Fatal(err)
	}
	if err := VerifyHandshake(consumer.Public, good, sig); err != nil {
		t.Fatalf("a valid signature was refused: %v", err)
	}
	other, _ := NewNonce()
	otherClient, _ := intruder.ClientPublicKey()
	with := func(f func(h *Handshake)) Handshake { h := good; f(&h); return h }
	intruderSig, _ := intruder.SignHandshake(good)
	cases := []struct {
		name string
		h    Handshake
		sig  []byte
	}{
		{"signed by another key", good, intruderSig},
		{"old scheme: signature over the raw nonce", good, ed25519.Sign(consumer.signing, nonce)},
		{"another provider", with(func(h *Handshake) { h.ProviderID = "naples" }), sig},
		{"another consumer", with(func(h *Handshake) { h.ConsumerID = "turin" }), sig},
		{"consumer and provider swapped", with(func(h *Handshake) { h.ConsumerID, h.ProviderID = h.ProviderID, h.ConsumerID }), sig},
		{"IDs split elsewhere", with(func(h *Handshake) { h.ConsumerID, h.ProviderID = "romem", "ilan" }), sig},
		{"another nonce", with(func(h *Handshake) { h.Nonce = other }), sig},
		{"another client key", with(func(h *Handshake) { h.ClientKey = otherClient }), sig},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := VerifyHandshake(consumer.Public, c.h, c.sig); !errors.Is(err, ErrBadSignature) {
				t.Fatalf("got %v, want ErrBadSignature", err)
			}
		})
	}
	if err := VerifyHandshake([]byte("short"), good, sig); err == nil {
		t.Fatal("a malformed public key was accepted")
	}
}

// TestHandshakeRefusesMalformedFields: the identity signs nothing but a
// complete handshake with a nonce of exactly consts.NonceSize bytes.
func TestHandshakeRefusesMalformedFields(t *testing.T) {
	k := mustKeys(t)
	nonce, _ := NewNonce()
	cases := []struct {
		name    string
		h       Handshake
		wantErr string
	}{
		{"short nonce", Handshake{ConsumerID: "rome", ProviderID: "milan", Nonce: nonce[:32], ClientKey: []byte("k")}, "the nonce has 32 bytes, expected 64"},
		{"long nonce", Handshake{ConsumerID: "rome", ProviderID: "milan", Nonce: append(nonce, nonce...), ClientKey: []byte("k")}, "the nonce has 128 bytes"},
		{"no consumer", Handshake{ProviderID: "milan", Nonce: nonce, ClientKey: []byte("k")}, "no consumer cluster ID"},
		{"no provider", Handshake{ConsumerID: "rome", Nonce: nonce, ClientKey: []byte("k")}, "no provider cluster ID"},
		{"no client key", Handshake{ConsumerID: "rome", ProviderID: "milan", Nonce: nonce}, "no client key"},
		{"oversized field", Handshake{ConsumerID: strings.Repeat("r", 1<<16), ProviderID: "milan", Nonce: nonce, ClientKey: []byte("k")}, "more than 65535"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sig, err := k.SignHandshake(c.h)
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("signing: got %v, want an error containing %q", err, c.wantErr)
			}
			if sig != nil {
				t.Fatal("a signature was returned with the error")
			}
			if err := VerifyHandshake(k.Public, c.h, make([]byte, ed25519.SignatureSize)); err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Fatalf("verifying: got %v, want an error containing %q", err, c.wantErr)
			}
		})
	}
}

func mustKeys(t *testing.T) *Keys {
	t.Helper()
	k, err := Generate()
	if err != nil {
		t.Fatal(err)
	}
	return k
}
