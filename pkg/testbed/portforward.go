package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// PortForward forwards a loopback port of this machine to port of the pod
// namespace/name through the API server of cfg, as kubectl port-forward
// does, and returns the local address. The forward ends with ctx.
func PortForward(ctx context.Context, cfg *rest.Config, namespace, name string, port int) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	transport, upgrader, err := spdy.RoundTripperFor(cfg)
	if err != nil {
		return "", err
	}
	url := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(namespace).Name(name).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	ready := make(chan struct{})
	fw, err := portforward.NewOnAddresses(dialer, []string{"127.0.0.1"}, []string{fmt.Sprintf("0:%d", port)},
		ctx.Done(), ready, io.Discard, io.Discard)
	if err != nil {
		return "", err
	}
	failed := make(chan error, 1)
	go func() { failed <- fw.ForwardPorts() }()
	select {
	case <-ready:
	case err := <-failed:
		return "", fmt.Errorf("port-forward to pod %s/%s: %w", namespace, name, err)
	case <-ctx.Done():
		return "", ctx.Err()
	}
	ports, err := fw.GetPorts()
	if err != nil {
		return "", err
	}
	if len(ports) != 1 {
		return "", errors.New("port-forward: no local port was opened")
	}
	return fmt.Sprintf("127.0.0.1:%d", ports[0].Local), nil
}
