package kubeletapi

import (
	"context"
	"errors"
	"strings"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/virtual-kubelet/virtual-kubelet/node/api/statsv1alpha1"
)

// statsSummary answers /stats/summary of the node the request came for.
func (s *Server) statsSummary(ctx context.Context) (*statsv1alpha1.Summary, error) {
	node, sample, err := s.scrape(ctx)
	if err != nil {
		return nil, err
	}
	return summary(node, sample), nil
}

// metricsResource answers /metrics/resource of the node the request came
// for: what metrics-server scrapes.
func (s *Server) metricsResource(ctx context.Context) ([]*dto.MetricFamily, error) {
	_, sample, err := s.scrape(ctx)
	if err != nil {
		return nil, err
	}
	return resourceMetrics(sample), nil
}

// scrape reads the usage of the node's pods from the provider and adds it
// to the node's counters. A provider that serves no metrics leaves the
// node without usage (valid, empty answers): it is said once in the log,
// not at every scrape, and said again when the metrics come back.
func (s *Server) scrape(ctx context.Context) (string, Sample, error) {
	node := nodeFrom(ctx)
	e := s.endpoint(node)
	if node == "" || e == nil || s.cfg.Usage == nil {
		return node, Sample{}, nil
	}
	log := s.cfg.Logger.WithValues("node", node)
	report, err := s.cfg.Usage.Usage(ctx, node)
	m := e.meter
	switch {
	case errors.Is(err, ErrNoMetrics):
		if m.setUnavailable(err.Error()) {
			log.Info("the provider serves no pod metrics: the virtual node reports no usage until it does", "reason", err.Error())
		}
		return node, Sample{}, nil
	case err != nil:
		return node, Sample{}, err
	}
	if m.setUnavailable("") {
		log.Info("the provider serves pod metrics again")
	}
	if m.setRejected(strings.Join(report.Rejected, "; ")) && len(report.Rejected) > 0 {
		log.Info("refused the provider's measures of some pods", "rejected", report.Rejected)
	}
	return node, m.observe(report.Pods, time.Now()), nil
}

// setUnavailable records why the provider serves no metrics ("" when it
// does) and tells whether that changed.
func (m *meter) setUnavailable(why string) bool { return m.note(&m.unavailable, why) }

// setRejected records the measures refused and tells whether they changed.
func (m *meter) setRejected(why string) bool { return m.note(&m.rejected, why) }

// note sets *field, a fact last logged, and tells whether it changed.
func (m *meter) note(field *string, v string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	changed := *field != v
	*field = v
	return changed
}
