package fuzz

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/liqo-go/liqo/pkg/consts"
	"github.com/liqo-go/liqo/pkg/webhook/reflected"
)

// FuzzEventReferences: whatever Event (JSON of either API, the peer's) a
// consumer records, an admitted one is about nothing but objects of its
// tenant namespace, and never a Node; bad JSON is an error, not a pass.
func FuzzEventReferences(f *testing.F) {
	for _, s := range []string{
		`{"involvedObject":{"kind":"ResourceSlice","namespace":"liqo-tenant-rome","name":"s"}}`,
		`{"involvedObject":{"kind":"Node","namespace":"liqo-tenant-rome","name":"cp-0"}}`,
		`{"regarding":{"kind":"Pod","namespace":"kube-system","name":"x"},"related":{"kind":"Node","name":"cp-0"}}`,
		`{"involvedObject":{}}`, `[]`, `{"related":null}`,
	} {
		f.Add("rome", s)
	}
	f.Fuzz(func(t *testing.T, id, event string) {
		bad, err := reflected.VetEventReferences(id, []byte(event))
		var refs struct {
			InvolvedObject, Regarding, Related *corev1.ObjectReference
		}
		if jerr := json.Unmarshal([]byte(event), &refs); jerr != nil {
			if err == nil && len(bad) == 0 {
				t.Fatalf("admitted undecodable %q", event)
			}
			return
		}
		if err != nil || len(bad) > 0 {
			for _, b := range bad {
				if !strings.Contains(b, id) {
					t.Fatalf("a refusal names no consumer: %q", b)
				}
			}
			return
		}
		for _, r := range []*corev1.ObjectReference{refs.InvolvedObject, refs.Regarding, refs.Related} {
			if r == nil || *r == (corev1.ObjectReference{}) {
				continue
			}
			if r.Kind == "Node" || r.Namespace != consts.TenantNamespace(id) {
				t.Fatalf("admitted an Event about %+v", *r)
			}
		}
	})
}
