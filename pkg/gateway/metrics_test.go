package gateway

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/liqo-go/liqo/pkg/datapath"
)

type countingApplier struct {
	counts map[string]datapath.Count
	err    error
}

func (countingApplier) Apply(context.Context, State) error { return nil }
func (countingApplier) Close() error                       { return nil }
func (a countingApplier) Dropped() (map[string]datapath.Count, error) {
	return a.counts, a.err
}

type plainApplier struct{}

func (plainApplier) Apply(context.Context, State) error { return nil }
func (plainApplier) Close() error                       { return nil }

// TestDropMetrics: /metrics shows each drop counter under its reason, a
// missing counter as 0, nothing for an Applier that counts nothing, and a
// failed read as an error rather than zeros.
func TestDropMetrics(t *testing.T) {
	for _, tc := range []struct {
		name     string
		dp       Applier
		code     int
		want     []string
		wantNone bool
	}{
		{name: "counts", dp: countingApplier{counts: map[string]datapath.Count{DroppedSource: {Packets: 7, Bytes: 700}}}, code: 200, want: []string{
			`liqo_gateway_tunnel_dropped_packets_total{reason="source"} 7`,
			`liqo_gateway_tunnel_dropped_packets_total{reason="destination"} 0`,
			`liqo_gateway_tunnel_dropped_bytes_total{reason="source"} 700`,
		}},
		{name: "no kernel", dp: plainApplier{}, code: 200, wantNone: true},
		{name: "read fails", dp: countingApplier{err: errors.New("netlink: permission denied")}, code: 500, want: []string{"permission denied"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			if err := registerDropMetrics(reg, tc.dp); err != nil {
				t.Fatal(err)
			}
			// Registered again, as a second Run in one process would.
			if err := registerDropMetrics(reg, tc.dp); err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}).
				ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
			body, _ := io.ReadAll(rec.Result().Body)
			if rec.Code != tc.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.code, body)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(body), w) {
					t.Errorf("missing %q in:\n%s", w, body)
				}
			}
			if tc.wantNone && len(body) != 0 {
				t.Errorf("an Applier without counters served:\n%s", body)
			}
		})
	}
}

// TestHealthServesNoMetrics: the health port, which the kubelet probes
// without credentials, answers /readyz and nothing of the metrics, which
// only the authenticated metrics endpoint serves.
func TestHealthServesNoMetrics(t *testing.T) {
	var active, ready atomic.Bool
	rec := httptest.NewRecorder()
	healthHandler(&active, &ready).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("GET /metrics on the health port: %d, want 404", rec.Code)
	}
	rec = httptest.NewRecorder()
	healthHandler(&active, &ready).ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("GET /readyz of a standby replica: %d, want 200", rec.Code)
	}
}
