package clusterset

import (
	"context"
	"maps"
	"slices"
	"sync"

	"reflect"

	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"

	"github.com/liqo-go/liqo/pkg/mcs/export"
	"github.com/liqo-go/liqo/pkg/mcs/merge"
)

// Entry is one peer's accepted export of a Service, its endpoints at the
// addresses this cluster reaches them at.
type Entry struct {
	Export      merge.Export
	AddressType discoveryv1.AddressType
	Endpoints   []discoveryv1.Endpoint
	Ports       []discoveryv1.EndpointPort
}

// Store holds the accepted exports of every peer. It is safe for
// concurrent use, and answers from memory: it never blocks on a peer.
type Store struct {
	mu       sync.Mutex
	bySender map[string]map[types.NamespacedName]Entry
	subs     []chan event.TypedGenericEvent[client.Object]
}

var _ export.Clusterset = (*Store)(nil)

// NewStore returns an empty Store.
func NewStore() *Store {
	return &Store{bySender: map[string]map[types.NamespacedName]Entry{}}
}

// Exports returns the peers' exports of Service namespace/name.
func (s *Store) Exports(_ context.Context, namespace, name string) ([]merge.Export, error) {
	var out []merge.Export
	for _, e := range s.Entries(namespace, name) {
		out = append(out, e.Export)
	}
	return out, nil
}

// Entries returns the peers' entries of Service namespace/name, by
// cluster ID.
func (s *Store) Entries(namespace, name string) []Entry {
	key := types.NamespacedName{Namespace: namespace, Name: name}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Entry
	for _, sender := range slices.Sorted(maps.Keys(s.bySender)) {
		if e, ok := s.bySender[sender][key]; ok {
			out = append(out, e)
		}
	}
	return out
}

// Changed returns a new channel told of (namespace and name) every
// Service whose peers' exports change from now on: each caller, a
// controller, gets its own. The channel is never closed.
func (s *Store) Changed() <-chan event.TypedGenericEvent[client.Object] {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := make(chan event.TypedGenericEvent[client.Object], 1024)
	s.subs = append(s.subs, ch)
	return ch
}

// set makes entries sender's exports, and tells of the Services whose
// entries changed.
func (s *Store) set(ctx context.Context, sender string, entries map[types.NamespacedName]Entry) {
	s.mu.Lock()
	old := s.bySender[sender]
	if len(entries) == 0 {
		delete(s.bySender, sender)
	} else {
		s.bySender[sender] = entries
	}
	var changed []types.NamespacedName
	for k, e := range entries {
		if o, ok := old[k]; !ok || !reflect.DeepEqual(o, e) {
			changed = append(changed, k)
		}
	}
	for k := range old {
		if _, ok := entries[k]; !ok {
			changed = append(changed, k)
		}
	}
	subs := slices.Clone(s.subs)
	s.mu.Unlock()
	for _, k := range changed {
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: k.Namespace, Name: k.Name}}
		for _, ch := range subs {
			select {
			case ch <- event.TypedGenericEvent[client.Object]{Object: obj}:
			case <-ctx.Done():
				return
			}
		}
	}
}
