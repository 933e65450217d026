package harness

import (
	"bytes"
	"context"
	"fmt"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/client-go/kubernetes"
)

// APIServerMetrics reads an API server's own metrics, by family name.
func APIServerMetrics(ctx context.Context, cs kubernetes.Interface) (map[string]*dto.MetricFamily, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the API server's metrics: %w", err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("parsing the API server's metrics: %w", err)
	}
	return families, nil
}

// Labels are a series' labels, by name.
func Labels(m *dto.Metric) map[string]string {
	labels := map[string]string{}
	for _, l := range m.GetLabel() {
		labels[l.GetName()] = l.GetValue()
	}
	return labels
}

// Requests counts the requests an API server served whose
// apiserver_request_total labels hold every label of want (such as verb
// DELETE, resource pods, code 404), whoever sent them.
func Requests(ctx context.Context, cs kubernetes.Interface, want map[string]string) (float64, error) {
	families, err := APIServerMetrics(ctx, cs)
	if err != nil {
		return 0, err
	}
	var n float64
series:
	for _, m := range families["apiserver_request_total"].GetMetric() {
		labels := Labels(m)
		for k, v := range want {
			if labels[k] != v {
				continue series
			}
		}
		n += m.GetCounter().GetValue()
	}
	return n, nil
}
