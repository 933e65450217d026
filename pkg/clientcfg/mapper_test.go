package clientcfg

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// countingMapper counts the RESTMapping calls reaching it.
type countingMapper struct {
	meta.RESTMapper
	calls int
}

func (c *countingMapper) RESTMapping(gk schema.GroupKind, versions ...string) (*meta.RESTMapping, error) {
	c.calls++
	return c.RESTMapper.RESTMapping(gk, versions...)
}

func TestMemoMapper(t *testing.T) {
	pods := schema.GroupVersionKind{Version: "v1", Kind: "Pod"}
	base := meta.NewDefaultRESTMapper(nil)
	base.Add(pods, meta.RESTScopeNamespace)
	delegate := &countingMapper{RESTMapper: base}
	m := NewMemoMapper(delegate)

	for range 3 {
		mapping, err := m.RESTMapping(pods.GroupKind(), "v1")
		if err != nil || mapping.Scope.Name() != meta.RESTScopeNameNamespace || mapping.GroupVersionKind != pods {
			t.Fatalf("mapping %+v, %v", mapping, err)
		}
	}
	if delegate.calls != 1 {
		t.Errorf("the delegate answered %d times for one kind and version, want once", delegate.calls)
	}

	// A failure is not remembered: the kind may appear later.
	widgets := schema.GroupVersionKind{Group: "example.com", Version: "v1", Kind: "Widget"}
	if _, err := m.RESTMapping(widgets.GroupKind(), "v1"); err == nil {
		t.Fatal("an unknown kind was mapped")
	}
	base.Add(widgets, meta.RESTScopeRoot)
	mapping, err := m.RESTMapping(widgets.GroupKind(), "v1")
	if err != nil || mapping.Scope.Name() != meta.RESTScopeNameRoot {
		t.Errorf("a kind added after a failed lookup: %+v, %v", mapping, err)
	}

	// With other than one version the delegate answers each time.
	before := delegate.calls
	if _, err := m.RESTMapping(pods.GroupKind(), "v1", "v2"); err != nil {
		t.Fatal(err)
	}
	if delegate.calls != before+1 {
		t.Errorf("a lookup without a version was answered from memory")
	}
}
