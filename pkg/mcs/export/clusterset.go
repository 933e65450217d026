package export

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/liqo-go/liqo/pkg/mcs/merge"
)

// Clusterset is what the cluster knows of the exports of the clusterset's
// other clusters.
type Clusterset interface {
	// Exports returns the other clusters' exports of the Service name in
	// namespace, already validated as their receiver validates any peer
	// input. It is called from concurrent reconciles and must not block on
	// a peer: it answers from what it holds.
	Exports(ctx context.Context, namespace, name string) ([]merge.Export, error)
	// Changed delivers an event naming (namespace and name) each Service
	// whose exports by other clusters changed, so that the cluster's own
	// export of it is evaluated again. The channel is never closed.
	Changed() <-chan event.TypedGenericEvent[client.Object]
}
