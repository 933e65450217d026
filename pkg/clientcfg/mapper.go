package clientcfg

import (
	"net/http"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Shared returns what the caches and clients of one cluster can share: an
// HTTP client (one connection pool, rather than one per cache) and a REST
// mapper (discovery done once), which remembers the mappings it found.
func Shared(cfg *rest.Config) (*http.Client, meta.RESTMapper, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, err
	}
	m, err := apiutil.NewDynamicRESTMapper(cfg, hc)
	if err != nil {
		return nil, nil, err
	}
	return hc, NewMemoMapper(m), nil
}

// MemoMapper is a RESTMapper that remembers the mappings of one version
// its delegate found. A cache restricted to namespaces asks its mapper
// whether the kind is namespaced on every read, and controller-runtime's
// mapper builds a new answer each time: on a hot path (a reconcile reading
// two objects per pod) that was a fifth of all the bytes allocated.
// Failures are not remembered: a kind whose CRD appears later is found
// then.
type MemoMapper struct {
	meta.RESTMapper
	mu       sync.RWMutex
	mappings map[schema.GroupVersionKind]*meta.RESTMapping
}

var _ meta.RESTMapper = (*MemoMapper)(nil)

// NewMemoMapper wraps m.
func NewMemoMapper(m meta.RESTMapper) *MemoMapper {
	return &MemoMapper{RESTMapper: m, mappings: map[schema.GroupVersionKind]*meta.RESTMapping{}}
}

// RESTMapping answers from memory for a kind asked with exactly one
// version; otherwise, or the first time, the delegate answers.
func (m *MemoMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	if len(versions) != 1 {
		return m.RESTMapper.RESTMapping(gk, versions...)
	}
	gvk := gk.WithVersion(versions[0])
	m.mu.RLock()
	mapping, ok := m.mappings[gvk]
	m.mu.RUnlock()
	if ok {
		return mapping, nil
	}
	mapping, err := m.RESTMapper.RESTMapping(gk, versions...)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.mappings[gvk] = mapping
	m.mu.Unlock()
	return mapping, nil
}
