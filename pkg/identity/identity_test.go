package identity

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
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
	ns := "liqo"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
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
		if !keys[i].Public.Equal(keys[0].Public) {
			t.Fatalf("caller %d got a different key pair", i)
		}
	}
	again, err := Ensure(ctx, cs, ns)
	if err != nil || !again.Public.Equal(keys[0].Public) {
		t.Fatalf("a later call got another key pair (%v)", err)
	}
}

func TestEnsureRejectsCorruptSecret(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs := cluster.Client()
	ns := "corrupt"
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().Secrets(ns).Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: SecretName},
		Data:       map[string][]byte{privateKeyField: []byte("short")},
	}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := Ensure(ctx, cs, ns); err == nil {
		t.Fatal("a corrupt identity secret was accepted")
	}
	// Nothing was overwritten: the user's object is left for them to inspect.
	s, err := cs.CoreV1().Secrets(ns).Get(ctx, SecretName, metav1.GetOptions{})
	if err != nil || string(s.Data[privateKeyField]) != "short" {
		t.Fatalf("the corrupt secret was modified (%v)", err)
	}
}

func TestNonceHandshake(t *testing.T) {
	consumer := mustKeys(t)
	intruder := mustKeys(t)
	nonce, err := NewNonce()
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(consumer.Public, nonce, consumer.Sign(nonce)); err != nil {
		t.Fatalf("a valid signature was refused: %v", err)
	}
	if err := Verify(consumer.Public, nonce, intruder.Sign(nonce)); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("a signature by another key: got %v, want ErrBadSignature", err)
	}
	other, _ := NewNonce()
	if err := Verify(consumer.Public, other, consumer.Sign(nonce)); !errors.Is(err, ErrBadSignature) {
		t.Fatalf("a signature of another nonce: got %v, want ErrBadSignature", err)
	}
	if err := Verify([]byte("short"), nonce, consumer.Sign(nonce)); err == nil {
		t.Fatal("a malformed public key was accepted")
	}
}

func mustKeys(t *testing.T) *Keys {
	t.Helper()
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return &Keys{Private: priv, Public: pub}
}
