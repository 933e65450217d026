package peeringuser

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/liqo-go/liqo/test/harness"
)

func serverCA(srv *httptest.Server) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
}

func TestTokenRoundTrip(t *testing.T) {
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	defer srv.Close()
	tok := Token{CA: serverCA(srv), Bearer: "eyJhbGciOi.eyJpc3Mi.c2ln"}
	got, err := ParseToken(tok.String())
	if err != nil {
		t.Fatal(err)
	}
	if string(got.CA) != string(tok.CA) || got.Bearer != tok.Bearer {
		t.Fatalf("round trip: got %+v, want %+v", got, tok)
	}
	if strings.ContainsAny(tok.String(), " \n=+/") {
		t.Errorf("the token is not one shell word of base64url: %q", tok.String())
	}
}

func TestParseTokenRefusesGarbage(t *testing.T) {
	for _, s := range []string{"", "abc", ".bearer", "!!!.bearer", "YWJj.bearer", "MII.bear er"} {
		if _, err := ParseToken(s); err == nil || !strings.Contains(err.Error(), "--auth-token") {
			t.Errorf("ParseToken(%q) = %v, want an error naming --auth-token", s, err)
		}
	}
}

// TestVerifyServer: the handshake checks the server's certificate against
// the token's CA and sends no request, whether it matches or not.
func TestVerifyServer(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { requests.Add(1) }))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake
	srv.StartTLS()
	defer srv.Close()
	ctx := context.Background()
	if err := VerifyServer(ctx, srv.URL, serverCA(srv), 5*time.Second); err != nil {
		t.Errorf("the server's own CA: %v", err)
	}
	wrong := harness.SelfSignedCA(t, "other-ca")
	if err := VerifyServer(ctx, srv.URL, wrong, 5*time.Second); !errors.Is(err, ErrUntrustedServer) {
		t.Errorf("another CA: got %v, want ErrUntrustedServer", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("the server got %d requests", n)
	}
	if err := VerifyServer(ctx, "http://"+strings.TrimPrefix(srv.URL, "https://"), serverCA(srv), time.Second); err == nil {
		t.Error("an http:// URL was accepted")
	}
}
