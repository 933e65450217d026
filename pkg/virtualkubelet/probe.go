package virtualkubelet

import "context"

// Probe asks the remote cluster's API server whether it is ready and which
// version it runs (remotecluster.Cluster, the provider's one probe, which
// needs no privilege there: /readyz and /version are public to any
// authenticated user). Both may be called from several goroutines.
type Probe interface {
	Ready(ctx context.Context) error
	ServerVersion(ctx context.Context) (string, error)
}
