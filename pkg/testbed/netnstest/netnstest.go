package netnstest

import (
	"fmt"
	"os"
	"testing"

	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// New creates a network namespace named prefix plus this process's ID
// (tests of several packages run at once), deleted at the end of the test,
// and returns its name. It fails the test without root, which namespaces
// need (CI runs as root).
func New(t testing.TB, prefix string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("the test needs root (network namespaces); CI runs as root")
	}
	name := fmt.Sprintf("%s%d", prefix, os.Getpid()%100000)
	if err := netns.Create(name); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = netns.Delete(name) })
	return name
}
