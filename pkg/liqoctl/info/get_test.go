package info

import (
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	doc := Info{
		Local:    LocalCluster{ClusterID: "rome", Namespace: "liqo", Labels: map[string]string{"region": "it"}},
		Peerings: []Peering{{ClusterID: "milan", Role: "Provider", Networking: ModuleInfo{Status: "Healthy"}}},
	}
	for path, want := range map[string]string{
		"local.clusterID":              "rome",
		"local.labels":                 `{"region":"it"}`,
		"peerings.0.role":              "Provider",
		"peerings.0.networking.status": "Healthy",
	} {
		if got, err := Get(doc, path); err != nil || got != want {
			t.Errorf("Get(%q) = %q, %v; want %q", path, got, err, want)
		}
	}
	for path, says := range map[string]string{
		"":                     "needs a field",
		"nope":                 `no field "nope" in the document`,
		"peerings.1.role":      "list of 1",
		"peerings.x":           `"x" is not an index`,
		"local.clusterID.more": "is a value",
	} {
		if _, err := Get(doc, path); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("Get(%q): %v, want an error saying %q", path, err, says)
		}
	}
}
