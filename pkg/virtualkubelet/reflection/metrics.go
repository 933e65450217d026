package reflection

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// The reflection's metrics, served with the controller manager's, by
// provider: the reflected kinds are the provider's, shared by its virtual
// nodes (the queue depths are the work queues' own, workqueue_depth{name=
// "reflection-<kind>-<provider>"} and "pods-<node>").
var (
	reflectedObjects = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "liqo_reflection_objects",
		Help: "Remote copies the reflection keeps, by provider and kind.",
	}, []string{"provider", "kind"})
	reflectionOperations = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "liqo_reflection_operations_total",
		Help: "Writes of remote copies, by provider, kind and operation (create, update, delete).",
	}, []string{"provider", "kind", "operation"})
	reflectionErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "liqo_reflection_errors_total",
		Help: "Failed reflections (retried), by provider and kind.",
	}, []string{"provider", "kind"})
	// A panic is a bug, not a provider being slow: it is counted apart so
	// that an alert can tell the two.
	reflectionPanics = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "liqo_reflection_panics_total",
		Help: "Reflections that panicked (recovered and retried with backoff), by provider and kind (pods for the pods).",
	}, []string{"provider", "kind"})
)

func init() {
	metrics.Registry.MustRegister(reflectedObjects, reflectionOperations, reflectionErrors, reflectionPanics)
}

// kindMetrics are one kind's metrics for one provider.
type kindMetrics struct {
	provider, kind string
	objects        prometheus.Gauge
	operations     *prometheus.CounterVec
	errors         prometheus.Counter
	panics         prometheus.Counter

	mu        sync.Mutex
	reflected map[types.NamespacedName]struct{}
}

func newKindMetrics(provider, kind string) *kindMetrics {
	return &kindMetrics{provider: provider, kind: kind,
		objects:    reflectedObjects.WithLabelValues(provider, kind),
		operations: reflectionOperations.MustCurryWith(prometheus.Labels{"provider": provider, "kind": kind}),
		errors:     reflectionErrors.WithLabelValues(provider, kind),
		panics:     reflectionPanics.WithLabelValues(provider, kind),
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
func (m *kindMetrics) drop() { dropMetrics(m.provider, m.kind) }

// dropMetrics removes the metrics of a provider's kind.
func dropMetrics(provider, kind string) {
	labels := prometheus.Labels{"provider": provider, "kind": kind}
	reflectedObjects.DeletePartialMatch(labels)
	reflectionOperations.DeletePartialMatch(labels)
	reflectionErrors.DeletePartialMatch(labels)
	reflectionPanics.DeletePartialMatch(labels)
}
