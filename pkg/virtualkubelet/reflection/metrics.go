package reflection

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The reflection's metrics, served with the controller manager's (the
// queue depths are the work queues' own, workqueue_depth{name=
// "reflection-<kind>-<node>"}).
var (
	reflectedObjects = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "liqo_reflection_objects",
		Help: "Remote copies the reflection keeps, by virtual node and kind.",
	}, []string{"node", "kind"})
	reflectionOperations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "liqo_reflection_operations_total",
		Help: "Writes of remote copies, by virtual node, kind and operation (create, update, delete).",
	}, []string{"node", "kind", "operation"})
	reflectionErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "liqo_reflection_errors_total",
		Help: "Failed reflections (retried), by virtual node and kind.",
	}, []string{"node", "kind"})
	// A panic is a bug, not a provider being slow: it is counted apart so
	// that an alert can tell the two.
	reflectionPanics = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "liqo_reflection_panics_total",
		Help: "Reflections that panicked (recovered and retried with backoff), by virtual node and kind (pods for the pods).",
	}, []string{"node", "kind"})
)

func init() {
	metrics.Registry.MustRegister(reflectedObjects, reflectionOperations, reflectionErrors, reflectionPanics)
}

// kindMetrics are one kind's metrics on one virtual node.
type kindMetrics struct {
	node, kind string
	objects    prometheus.Gauge
	operations *prometheus.CounterVec
	errors     prometheus.Counter
	panics     prometheus.Counter

	mu        sync.Mutex
	reflected map[types.NamespacedName]struct{}
}

func newKindMetrics(node, kind string) *kindMetrics {
	return &kindMetrics{node: node, kind: kind,
		objects:    reflectedObjects.WithLabelValues(node, kind),
		operations: reflectionOperations.MustCurryWith(prometheus.Labels{"node": node, "kind": kind}),
		errors:     reflectionErrors.WithLabelValues(node, kind),
		panics:     reflectionPanics.WithLabelValues(node, kind),
		reflected:  map[types.NamespacedName]struct{}{},
	}
}

// observe records whether a local object has its remote copy.
func (m *kindMetrics) observe(key types.NamespacedName, reflected bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if reflected {
		m.reflected[key] = struct{}{}
	} else {
		delete(m.reflected, key)
	}
	m.objects.Set(float64(len(m.reflected)))
}

// forgetNamespace drops the objects of a namespace no longer reflected.
func (m *kindMetrics) forgetNamespace(namespace string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for key := range m.reflected {
		if key.Namespace == namespace {
			delete(m.reflected, key)
		}
	}
	m.objects.Set(float64(len(m.reflected)))
}

// drop removes the metrics of a reflection that stopped.
func (m *kindMetrics) drop() {
	labels := prometheus.Labels{"node": m.node, "kind": m.kind}
	reflectedObjects.DeletePartialMatch(labels)
	reflectionOperations.DeletePartialMatch(labels)
	reflectionErrors.DeletePartialMatch(labels)
	reflectionPanics.DeletePartialMatch(labels)
}
