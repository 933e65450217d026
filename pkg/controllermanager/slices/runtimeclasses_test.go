package slices

import (
	"maps"
	"strings"
	"testing"
)

func TestNodeLabels(t *testing.T) {
	cluster := map[string]string{"region": "eu"}
	if got := NodeLabels(cluster, nil); !maps.Equal(got, cluster) {
		t.Errorf("no runtime classes: %v", got)
	}
	long := strings.Repeat("a", 64)
	got := NodeLabels(cluster, []string{"nvidia", "kata.v2", long})
	want := map[string]string{"region": "eu", "runtimeclass.liqo.io/nvidia": "true", "runtimeclass.liqo.io/kata.v2": "true"}
	if !maps.Equal(got, want) {
		t.Errorf("NodeLabels = %v, want %v", got, want)
	}
	if len(cluster) != 1 {
		t.Errorf("the cluster labels were modified: %v", cluster)
	}
}
