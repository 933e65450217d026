package kit

import (
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

// MetricsReaderClusterRole is the chart's ClusterRole granting GET on
// /metrics, which a Prometheus scraping our components binds to its
// ServiceAccount.
const MetricsReaderClusterRole = "liqo-metrics-reader"

// MetricsServer is every component's metrics endpoint at addr ("0": none):
// HTTPS (a self-signed certificate), answering only callers the API
// server authenticates (a bearer token, through a TokenReview) and
// authorizes to get the non-resource URL /metrics (a
// SubjectAccessReview), as the kubelet's and the API server's own metrics
// are. Anyone else reaching the pod (an offloaded pod where NetworkPolicies
// are not enforced, another tenant's) gets 401 or 403, and learns nothing
// of the tenants' names, counts and errors the metrics carry. The
// component's ServiceAccount needs to create tokenreviews and
// subjectaccessreviews.
func MetricsServer(addr string) metricsserver.Options {
	return metricsserver.Options{BindAddress: addr, SecureServing: true, FilterProvider: filters.WithAuthenticationAndAuthorization}
}
