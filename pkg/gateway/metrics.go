package gateway

import (
	"fmt"
	"io"
	"net/http"

	"github.com/liqo-go/liqo/pkg/datapath"
)

// dropCounter is an Applier that counts what it drops from the tunnel
// (Kernel does; an Applier that touches no kernel has nothing to count).
type dropCounter interface {
	Dropped() (map[string]datapath.Count, error)
}

// dropReasons names each counter's reason in the metric's label.
var dropReasons = []struct{ counter, reason string }{
	{DroppedSource, "source"},
	{DroppedDestination, "destination"},
}

// serveDropMetrics answers /metrics on the health port, in Prometheus'
// text format: the packets and bytes the gateway dropped from the tunnel,
// by reason, so that a peer sending what it may not can be seen (and
// alerted on) without a shell in the gateway pod.
func serveDropMetrics(w http.ResponseWriter, dp Applier) {
	dc, ok := dp.(dropCounter)
	if !ok {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		return
	}
	counts, err := dc.Dropped()
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/plain; version=0.0.4")
	writeDropMetrics(w, counts)
}

func writeDropMetrics(w io.Writer, counts map[string]datapath.Count) {
	_, _ = fmt.Fprintln(w, "# HELP liqo_gateway_tunnel_dropped_packets_total Packets from the peer's tunnel dropped: a source outside the peer's CIDRs, or a destination it may not reach.")
	_, _ = fmt.Fprintln(w, "# TYPE liqo_gateway_tunnel_dropped_packets_total counter")
	for _, r := range dropReasons {
		_, _ = fmt.Fprintf(w, "liqo_gateway_tunnel_dropped_packets_total{reason=%q} %d\n", r.reason, counts[r.counter].Packets)
	}
	_, _ = fmt.Fprintln(w, "# HELP liqo_gateway_tunnel_dropped_bytes_total Bytes of the packets counted by liqo_gateway_tunnel_dropped_packets_total.")
	_, _ = fmt.Fprintln(w, "# TYPE liqo_gateway_tunnel_dropped_bytes_total counter")
	for _, r := range dropReasons {
		_, _ = fmt.Fprintf(w, "liqo_gateway_tunnel_dropped_bytes_total{reason=%q} %d\n", r.reason, counts[r.counter].Bytes)
	}
}
