package gateway

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"

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
			rec := httptest.NewRecorder()
			dropMetricsHandler(tc.dp).ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
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
