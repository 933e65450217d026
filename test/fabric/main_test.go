// Package fabric tests the network fabric's datapath with real packets:
// two "clusters" built from network namespaces, with the same pod CIDR,
// each a pod, a node and a gateway, joined by their gateways' WireGuard
// tunnel over an "internet" bridge. The gateway runs as a child process
// inside its namespace (as it runs in its pod); the node agent's part is
// applied in the node's namespace. Every address lives inside namespaces
// the test creates.
package fabric

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"github.com/liqo-go/liqo/pkg/gateway"
)

// childEnv carries a gateway's configuration to the child process.
const childEnv = "LIQO_FABRIC_TEST_GATEWAY"

type childConfig struct {
	Kernel *gateway.Kernel
	State  gateway.State
}

func TestMain(m *testing.M) {
	if cfg := os.Getenv(childEnv); cfg != "" {
		os.Exit(runGateway(cfg))
	}
	os.Exit(m.Run())
}

// runGateway is the child: it applies the gateway's state, says "ready",
// and, when its stdin closes, removes everything and says "closed".
func runGateway(cfg string) int {
	var c childConfig
	if err := json.Unmarshal([]byte(cfg), &c); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	signal.Ignore(syscall.SIGPIPE)
	k := c.Kernel
	if err := k.Apply(context.Background(), c.State); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("ready")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
	if err := k.Close(); err != nil {
		fmt.Println("error:", err)
		return 1
	}
	fmt.Println("closed")
	return 0
}
