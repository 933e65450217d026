package crds_test

import (
	"context"
	"encoding/base64"
	"net/netip"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/deploy/charts/liqo/crds"
)

// fuzzNamespace holds the objects the fuzzer sends (dry-run: none stays).
const fuzzNamespace = "fuzz"

var (
	fuzzOnce   sync.Once
	fuzzClient client.Client
	fuzzErr    error
)

// setUpFuzz installs the CRDs and the namespace once per process (the
// coordinator's and each fuzzing worker's, all on the coordinator's API
// server: see TestMain).
func setUpFuzz(cfg *rest.Config) (client.Client, error) {
	fuzzOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if fuzzErr = crds.Install(ctx, cfg); fuzzErr != nil {
			return
		}
		// The fuzzer's requests are all one worker does: no client-side
		// rate limit (client-go's default is 5 per second).
		cfg = rest.CopyConfig(cfg)
		cfg.QPS, cfg.Burst = 1000, 1000
		if fuzzClient, fuzzErr = client.New(cfg, client.Options{}); fuzzErr != nil {
			return
		}
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fuzzNamespace}}
		if err := fuzzClient.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
			fuzzErr = err
		}
	})
	return fuzzClient, fuzzErr
}

// FuzzCRDValidation sends what a peer controls to the API server with the
// CRDs installed and no webhook, as server-side dry-run creates, and checks
// that whatever the CRDs' schemas and rules let through is what the
// controllers downstream assume:
//   - every quantity of a ResourceSlice's resources and of a ShadowPod's
//     container requests and limits parses and is not negative, and a
//     negative one is always refused;
//   - a Network's CIDR is a canonical prefix (zero host bits), as the IPAM
//     needs to compare and remap it;
//   - a PublicKey's key is 32 bytes, the only size WireGuard takes.
func FuzzCRDValidation(f *testing.F) {
	for _, seed := range []struct{ cpu, memory, pods, cidr, key string }{
		{"4", "8Gi", "110", "10.244.0.0/16", base64.StdEncoding.EncodeToString(make([]byte, 32))},
		{"-1", "-1Gi", "-5", "10.244.0.1/16", "AAAA"},
		{"1e3", "0.5", "1.5", "::/0", ""},
		{"lots", "1Ki", "0", "10.0.0.0/33", base64.StdEncoding.EncodeToString(make([]byte, 31))},
		{"-0", "+1", "1m", "::ffff:10.0.0.0/104", "not base64!"},
		{"0", "1", "1", "::0/4", ""}, // the network ::/4, not in its canonical text
	} {
		f.Add(seed.cpu, seed.memory, seed.pods, seed.cidr, seed.key)
	}
	c, err := setUpFuzz(apiConfig)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cpu, memory, pods, cidr, key string) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		quantities := map[string]any{"cpu": cpu, "memory": memory, "pods": pods}
		checkQuantities(ctx, t, c, "ResourceSlice", object("authentication.liqo.io/v1beta1", "ResourceSlice",
			map[string]any{"resources": quantities}), cpu, memory, pods)
		container := map[string]any{"name": "app", "image": "busybox", "resources": map[string]any{
			"requests": map[string]any{"cpu": cpu, "memory": memory},
			"limits":   map[string]any{"cpu": cpu, "memory": memory},
		}}
		checkQuantities(ctx, t, c, "ShadowPod", object("offloading.liqo.io/v1beta1", "ShadowPod",
			map[string]any{"pod": map[string]any{"containers": []any{container}}}), cpu, memory)

		if accepted(ctx, t, c, object("ipam.liqo.io/v1alpha1", "Network", map[string]any{"cidr": cidr})) {
			p, err := netip.ParsePrefix(cidr)
			if err != nil || p != p.Masked() || p.String() != cidr {
				t.Errorf("a Network of CIDR %q was accepted: it is no canonical prefix (%v)", cidr, err)
			}
		}
		if accepted(ctx, t, c, object("networking.liqo.io/v1beta1", "PublicKey", map[string]any{"publicKey": key})) {
			if b, err := base64.StdEncoding.DecodeString(key); err != nil || len(b) != 32 {
				t.Errorf("a PublicKey %q was accepted: it is no 32-byte key (%d bytes, %v)", key, len(b), err)
			}
		}
	})
}

// object is an unstructured object of kind in the fuzz namespace: the
// fuzzer's strings go to the API server as they are, which the Go types'
// quantities would not let them.
func object(apiVersion, kind string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"generateName": "fuzz-", "namespace": fuzzNamespace},
		"spec":     spec,
	}}
}

// accepted dry-run creates obj and tells whether the API server took it;
// any answer but an acceptance or a refusal of the object fails the test.
func accepted(ctx context.Context, t *testing.T, c client.Client, obj *unstructured.Unstructured) bool {
	t.Helper()
	err := c.Create(ctx, obj, client.DryRunAll)
	switch {
	case err == nil:
		return true
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		return false
	}
	t.Fatalf("creating a %s: %v", obj.GetKind(), err)
	return false
}

// checkQuantities checks the quantities of obj as the API server judged
// them: accepted, each parses and is not negative; a negative one, refused.
func checkQuantities(ctx context.Context, t *testing.T, c client.Client, what string, obj *unstructured.Unstructured, values ...string) {
	t.Helper()
	negative := false
	for _, v := range values {
		if q, err := resource.ParseQuantity(v); err == nil && q.Sign() < 0 {
			negative = true
		}
	}
	ok := accepted(ctx, t, c, obj)
	if negative && ok {
		t.Errorf("a %s with a negative quantity among %q was accepted", what, values)
	}
	if !ok {
		return
	}
	for _, v := range values {
		if q, err := resource.ParseQuantity(v); err != nil || q.Sign() < 0 {
			t.Errorf("a %s with quantity %q was accepted: it is malformed or negative (%v)", what, v, err)
		}
	}
}
