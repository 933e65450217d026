package kubeletapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/tools/portforward"
	"k8s.io/client-go/transport/spdy"
)

// forward carries one port-forward stream, the data of one TCP connection
// to port of the pod, to the twin pod through the provider's API server:
// one port-forward connection there per stream, with its error and data
// streams, as kubectl port-forward opens them.
func forward(ctx context.Context, t *Target, port int32, stream io.ReadWriteCloser) error {
	transport, upgrader, err := spdy.RoundTripperFor(t.Config)
	if err != nil {
		return err
	}
	url := t.Clientset.CoreV1().RESTClient().Post().Resource("pods").Namespace(t.Namespace).Name(t.Name).SubResource("portforward").URL()
	dialer := spdy.NewDialer(upgrader, &http.Client{Transport: transport}, http.MethodPost, url)
	conn, _, err := dialer.Dial(portforward.PortForwardProtocolV1Name)
	if err != nil {
		return remoteError(fmt.Errorf("port-forward to pod %s/%s: %w", t.Namespace, t.Name, err))
	}
	defer func() { _ = conn.Close() }()

	headers := http.Header{}
	headers.Set(corev1.StreamType, corev1.StreamTypeError)
	headers.Set(corev1.PortHeader, strconv.Itoa(int(port)))
	headers.Set(corev1.PortForwardRequestIDHeader, "0")
	errStream, err := conn.CreateStream(headers)
	if err != nil {
		return fmt.Errorf("port-forward to pod %s/%s: creating the error stream: %w", t.Namespace, t.Name, err)
	}
	// Nothing is ever written to the error stream, only read.
	_ = errStream.Close()
	headers.Set(corev1.StreamType, corev1.StreamTypeData)
	data, err := conn.CreateStream(headers)
	if err != nil {
		return fmt.Errorf("port-forward to pod %s/%s: creating the data stream: %w", t.Namespace, t.Name, err)
	}
	return pipe(ctx, conn, errStream, data, stream)
}

// pipe copies between the local stream and the remote data stream until
// the remote side is done, and returns what the remote error stream said.
func pipe(ctx context.Context, conn httpstream.Connection, errStream, data httpstream.Stream, local io.ReadWriteCloser) error {
	remoteErr := make(chan error, 1)
	go func() {
		// A read cut short by the connection's close says nothing.
		msg, _ := io.ReadAll(errStream)
		if len(msg) > 0 {
			remoteErr <- errors.New(string(msg))
			return
		}
		remoteErr <- nil
	}()

	var wg sync.WaitGroup
	wg.Go(func() {
		// The local side's end of input is the remote side's.
		_, _ = io.Copy(data, local)
		_ = data.Close()
	})
	done := make(chan struct{})
	go func() {
		_, _ = io.Copy(local, data)
		close(done)
	}()
	var result error
	select {
	case <-done:
		// The remote side writes its failure, if any, before it closes.
		select {
		case result = <-remoteErr:
		case <-time.After(time.Second):
		}
	case <-conn.CloseChan():
	case <-ctx.Done():
	}
	// Closing the local stream ends the local copy, and the connection's
	// close the remote one.
	_ = local.Close()
	_ = conn.Close()
	wg.Wait()
	return result
}
