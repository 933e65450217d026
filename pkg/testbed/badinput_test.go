package testbed

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"
)

func TestPortConflict(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	port := l.Addr().(*net.TCPAddr).Port

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = Start(ctx, Options{}, ClusterSpec{Name: "taken", APIServerPort: port})
	if err == nil || !strings.Contains(err.Error(), "already in use") || !strings.Contains(err.Error(), `"taken"`) {
		t.Fatalf("starting a cluster on a used port: got %v, want an error naming the cluster and the port in use", err)
	}
}

func TestMissingGoToolchain(t *testing.T) {
	_, err := EnsureBinaries(context.Background(), BuildOptions{CacheDir: t.TempDir(), Go: "no-such-go-toolchain"})
	if err == nil || !strings.Contains(err.Error(), "needs the Go toolchain") {
		t.Fatalf("building without Go: got %v, want an error explaining that Go is needed", err)
	}
}

func TestSpecValidation(t *testing.T) {
	cases := []struct {
		name string
		spec ClusterSpec
		want string
	}{
		{"upper case name", ClusterSpec{Name: "Rome"}, "not valid"},
		{"empty name", ClusterSpec{}, "not valid"},
		{"duplicate pools", ClusterSpec{Name: "a", Nodes: []NodePool{{Prefix: "w", Count: 1}, {Prefix: "w", Count: 1}}}, "share the prefix"},
		{"negative count", ClusterSpec{Name: "a", Nodes: []NodePool{{Count: -1}}}, "negative"},
		{"port out of range", ClusterSpec{Name: "a", APIServerPort: 70000}, "out of range"},
		{"metrics-server without real nodes", ClusterSpec{Name: "a", MetricsServer: true}, "has none"},
		{"valid", ClusterSpec{Name: "rome"}, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.spec.Validate()
			if tc.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want an error containing %q", err, tc.want)
			}
		})
	}
}

func TestNodeCIDRMaskSize(t *testing.T) {
	cases := map[int]int{110: 24, 254: 24, 255: 23, 500: 23, 1000: 22}
	for pods, want := range cases {
		s := ClusterSpec{Nodes: []NodePool{{Pods: pods}}}
		if got := s.nodeCIDRMaskSize(); got != want {
			t.Errorf("%d pods per node: mask /%d, want /%d", pods, got, want)
		}
	}
}

func TestDuplicateClusterNames(t *testing.T) {
	_, err := Start(context.Background(), Options{Binaries: &Binaries{}}, ClusterSpec{Name: "a"}, ClusterSpec{Name: "a"})
	if err == nil || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("got %v, want a duplicate-name error", err)
	}
}

func TestUnderlayNames(t *testing.T) {
	for _, bad := range []string{"", "toolongname", "a-b", "a/b", "a b"} {
		if err := checkUnderlayName(bad); err == nil {
			t.Errorf("underlay name %q accepted", bad)
		}
	}
	for _, good := range []string{"abc123", UnderlayNameFor("/root/.liqo/playground"), newUnderlayName()} {
		if err := checkUnderlayName(good); err != nil {
			t.Errorf("underlay name %q refused: %v", good, err)
		}
	}
	if vethName("lqtb-p2ec0c-s12-3") != "p2ec0cs12n3" {
		t.Errorf("veth name %q", vethName("lqtb-p2ec0c-s12-3"))
	}
}
