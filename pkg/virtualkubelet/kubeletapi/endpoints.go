package kubeletapi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
)

// maxNodePorts bounds the ports tried from a fixed base port: the virtual
// nodes of one manager take base, base+1, ... whichever are free.
const maxNodePorts = 1000

// Open gives node a listener of its own, if it has none yet, and returns
// the endpoint the node publishes as its InternalIP and kubelet port. With
// a fixed port in Config.ListenAddress, nodes take the first free port from
// it up; with port 0, any free port. The endpoint stays the node's until
// Release, so that a restarted virtual node keeps its port.
func (s *Server) Open(node string) (ip string, port int32, err error) {
	if node == "" {
		return "", 0, errors.New("kubelet API: a virtual node without a name")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.nodes[node]; ok {
		return s.cfg.AdvertiseIP, int32(e.port), nil
	}
	if s.stopped {
		return "", 0, errors.New("kubelet API: the server has stopped")
	}
	l, err := s.listen()
	if err != nil {
		return "", 0, err
	}
	e := &nodeEndpoint{listener: l, port: l.Addr().(*net.TCPAddr).Port, meter: newMeter()}
	s.nodes[node] = e
	if s.srv != nil {
		go s.serve(node, l)
	}
	s.cfg.Logger.V(1).Info("kubelet API endpoint opened", "node", node, "listen", l.Addr().String())
	return s.cfg.AdvertiseIP, int32(e.port), nil
}

// Release closes node's listener and forgets its usage counters, once the
// virtual node is gone.
func (s *Server) Release(node string) {
	s.mu.Lock()
	e, ok := s.nodes[node]
	delete(s.nodes, node)
	s.mu.Unlock()
	if ok {
		_ = e.listener.Close()
	}
}

// listen opens a listener at the configured host, on the first free port
// from the configured one (any free port if it is 0).
func (s *Server) listen() (net.Listener, error) {
	host, p, err := net.SplitHostPort(s.cfg.ListenAddress)
	if err != nil {
		return nil, fmt.Errorf("kubelet API listen address %q: %w", s.cfg.ListenAddress, err)
	}
	base, err := strconv.Atoi(p)
	if err != nil {
		return nil, fmt.Errorf("kubelet API listen address %q: %w", s.cfg.ListenAddress, err)
	}
	if base == 0 {
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return nil, fmt.Errorf("kubelet API: %w", err)
		}
		return l, nil
	}
	var last error
	for port := base; port < base+maxNodePorts && port <= 65535; port++ {
		l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
		if err == nil {
			return l, nil
		}
		last = err
	}
	return nil, fmt.Errorf("kubelet API: no free port from %d on %s: %w", base, host, last)
}

// nodeAt is the node whose listener has port, or "".
func (s *Server) nodeAt(port int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	for node, e := range s.nodes {
		if e.port == port {
			return node
		}
	}
	return ""
}

// endpoint is node's endpoint, or nil once released.
func (s *Server) endpoint(node string) *nodeEndpoint {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nodes[node]
}

type nodeKey struct{}

// withNode records in a connection's context the node it is for.
func withNode(ctx context.Context, node string) context.Context {
	return context.WithValue(ctx, nodeKey{}, node)
}

// nodeFrom is the node a request is for, from the port it came in on.
func nodeFrom(ctx context.Context) string {
	node, _ := ctx.Value(nodeKey{}).(string)
	return node
}
