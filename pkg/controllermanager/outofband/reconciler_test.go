package outofband

import (
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/liqo-go/liqo/apis"
	corev1beta1 "github.com/liqo-go/liqo/apis/core/v1beta1"
	"github.com/liqo-go/liqo/pkg/peering"
	"github.com/liqo-go/liqo/pkg/peeringuser"
	"github.com/liqo-go/liqo/test/harness"
)

// TestUntrustedServerGetsNothing: a request whose token's CA is not the
// server's is given up (Error, UntrustedServer, a Warning Event) after the
// TLS handshake alone: the server sees no request, hence no token. The
// same request is not tried again.
func TestUntrustedServerGetsNothing(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	defer srv.Close()

	req := peering.OutOfBandRequest{ID: "r1", AuthURL: srv.URL, ClusterID: "milan",
		Token: peeringuser.Token{CA: harness.SelfSignedCA(t, "not-the-server"), Bearer: "secret-token"}.String()}
	s, err := req.Secret()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(s).
		WithStatusSubresource(&corev1beta1.ForeignCluster{}).Build()
	events := record.NewFakeRecorder(10)
	r := &Reconciler{Client: c, Reader: c, ClusterID: "rome", Recorder: events, Timeout: 10 * time.Second, Reach: 5 * time.Second}
	ctx := context.Background()
	_, err = r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(s)})
	if !errors.Is(err, reconcile.TerminalError(nil)) || !strings.Contains(err.Error(), "refusing to send the token") {
		t.Fatalf("want a terminal refusal to send the token, got %v", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the server got %d requests", n)
	}
	var fc corev1beta1.ForeignCluster
	if err := c.Get(ctx, client.ObjectKey{Name: "milan"}, &fc); err != nil {
		t.Fatal(err)
	}
	cond := peering.OutOfBandState(&fc, "r1")
	if cond == nil || cond.Status != corev1beta1.ErrorStatus || cond.Reason != peering.ReasonUntrustedServer || !strings.Contains(cond.Message, "altered") {
		t.Errorf("condition: %+v, want Error %s saying the token may be altered", cond, peering.ReasonUntrustedServer)
	}
	var warned bool
	for len(events.Events) > 0 {
		if e := <-events.Events; strings.HasPrefix(e, "Warning "+peering.ReasonUntrustedServer) {
			warned = true
		}
	}
	if !warned {
		t.Error("no Warning Event for the refusal")
	}
	if _, err := r.Reconcile(ctx, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(s)}); err != nil {
		t.Errorf("the request given up was tried again: %v", err)
	}
}

// TestInvalidRequest: a request the manager cannot read is reported as
// such, and nothing is tried.
func TestInvalidRequest(t *testing.T) {
	req := peering.OutOfBandRequest{ID: "r2", AuthURL: "https://milan.example:6443", ClusterID: "milan", Token: "t"}
	s, err := req.Secret()
	if err != nil {
		t.Fatal(err)
	}
	s.Data["auth-url"] = []byte("http://milan.example:6443")
	c := fake.NewClientBuilder().WithScheme(apis.NewScheme()).WithObjects(s).
		WithStatusSubresource(&corev1beta1.ForeignCluster{}).Build()
	r := &Reconciler{Client: c, Reader: c, ClusterID: "rome", Timeout: time.Second, Reach: time.Second}
	if _, err := r.Reconcile(context.Background(), reconcile.Request{NamespacedName: client.ObjectKeyFromObject(s)}); err != nil {
		t.Fatal(err)
	}
	var fc corev1beta1.ForeignCluster
	if err := c.Get(context.Background(), client.ObjectKey{Name: "milan"}, &fc); err != nil {
		t.Fatal(err)
	}
	if cond := peering.OutOfBandState(&fc, "r2"); cond == nil || cond.Status != corev1beta1.ErrorStatus || cond.Reason != peering.ReasonInvalidRequest {
		t.Errorf("condition: %+v, want Error %s", cond, peering.ReasonInvalidRequest)
	}
}
