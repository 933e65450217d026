package gateway

import (
	"github.com/prometheus/client_golang/prometheus"

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

var (
	droppedPackets = prometheus.NewDesc("liqo_gateway_tunnel_dropped_packets_total",
		"Packets from the peer's tunnel dropped: a source outside the peer's CIDRs, or a destination it may not reach.",
		[]string{"reason"}, nil)
	droppedBytes = prometheus.NewDesc("liqo_gateway_tunnel_dropped_bytes_total",
		"Bytes of the packets counted by liqo_gateway_tunnel_dropped_packets_total.", []string{"reason"}, nil)
)

// dropCollector reads the kernel's counters at each scrape: they live in
// nftables, not in this process.
type dropCollector struct{ dc dropCounter }

func (c dropCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- droppedPackets
	ch <- droppedBytes
}

func (c dropCollector) Collect(ch chan<- prometheus.Metric) {
	counts, err := c.dc.Dropped()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(droppedPackets, err)
		return
	}
	for _, r := range dropReasons {
		ch <- prometheus.MustNewConstMetric(droppedPackets, prometheus.CounterValue, float64(counts[r.counter].Packets), r.reason)
		ch <- prometheus.MustNewConstMetric(droppedBytes, prometheus.CounterValue, float64(counts[r.counter].Bytes), r.reason)
	}
}

// registerDropMetrics adds to reg (controller-runtime's Registry, which
// the gateway's metrics endpoint serves) the packets and bytes the gateway
// dropped from the tunnel, by reason, so that a peer sending what it may
// not can be seen (and alerted on) without a shell in the gateway pod;
// nothing for an Applier that counts nothing, and a failed read of the
// counters as an error rather than zeros. Those of an earlier Run in the
// same process are replaced.
func registerDropMetrics(reg prometheus.Registerer, dp Applier) error {
	dc, ok := dp.(dropCounter)
	if !ok {
		return nil
	}
	c := dropCollector{dc}
	reg.Unregister(c)
	return reg.Register(c)
}
