package testbed

import (
	"fmt"
	"net"
	"sync"
)

// reserved remembers the ports this process handed out and has not released,
// so that clusters started concurrently never pick the same free port between
// the probe and the component binding it. It is process-wide on purpose:
// several testbeds may run in one test binary.
var reserved = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePort returns a loopback TCP port nobody listens on and reserves it.
func freePort() (int, error) {
	reserved.Lock()
	defer reserved.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("finding a free loopback port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !reserved.ports[port] {
			reserved.ports[port] = true
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free loopback port found after 100 attempts")
}

// claimPort reserves a port the user asked for, failing clearly if it is
// taken.
func claimPort(port int, what string) error {
	reserved.Lock()
	defer reserved.Unlock()
	if reserved.ports[port] {
		return fmt.Errorf("port %d for %s is already used by another testbed cluster", port, what)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return fmt.Errorf("port %d for %s is already in use: %w (choose another port or stop what listens on it)", port, what, err)
	}
	l.Close()
	reserved.ports[port] = true
	return nil
}

func releasePorts(ports []int) {
	reserved.Lock()
	defer reserved.Unlock()
	for _, p := range ports {
		delete(reserved.ports, p)
	}
}

// portBound tells whether something listens on a loopback port.
func portBound(port int) bool {
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return true
	}
	l.Close()
	return false
}
