// Command liqo-mover copies a volume's files between two pods for liqoctl
// move volume (see package mover): one side listens, the other connects,
// either sends. It exits 0 only when the receiver's copy has the source's
// digest, and leaves its summary, or why it failed, as its container's
// termination message, where liqoctl reads it.
package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/liqo-go/liqo/pkg/mover"
)

// version is set by `make images` (-ldflags -X main.version=<tag>).
var version = "dev"

func main() {
	os.Exit(run())
}

func run() int {
	fs := pflag.NewFlagSet("liqo-mover", pflag.ContinueOnError)
	var (
		role        = fs.String("role", "", "send or receive the directory's files")
		dir         = fs.String("dir", "/data", "the volume's mount point")
		listen      = fs.String("listen", "", "address to accept the other side on (host:port)")
		connect     = fs.String("connect", "", "address of the other side (host:port), retried until --timeout")
		timeout     = fs.Duration("timeout", 2*time.Minute, "how long to wait for the other side")
		termLog     = fs.String("termination-log", "/dev/termination-log", "where the summary or the error is written")
		showVersion = fs.Bool("version", false, "print the version and exit")
	)
	if err := fs.Parse(os.Args[1:]); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *showVersion {
		fmt.Println(version)
		return 0
	}
	s, err := move(*role, *dir, *listen, *connect, *timeout)
	msg := s.String()
	if err != nil {
		msg = err.Error()
		fmt.Fprintln(os.Stderr, "liqo-mover:", msg)
	} else {
		fmt.Println(msg)
	}
	_ = os.WriteFile(*termLog, []byte(msg), 0o644)
	if err != nil {
		return 1
	}
	return 0
}

func move(role, dir, listen, connect string, timeout time.Duration) (mover.Summary, error) {
	if role != "send" && role != "receive" {
		return mover.Summary{}, fmt.Errorf("--role must be send or receive, not %q", role)
	}
	if (listen == "") == (connect == "") {
		return mover.Summary{}, errors.New("exactly one of --listen and --connect")
	}
	conn, err := reach(listen, connect, timeout)
	if err != nil {
		return mover.Summary{}, err
	}
	defer func() { _ = conn.Close() }()
	if role == "receive" {
		return mover.Receive(conn, dir)
	}
	return mover.Send(conn, dir, func(n int64) { fmt.Fprintf(os.Stderr, "sent %d bytes\n", n) })
}

// reach accepts the other side on listen, or connects to it, retrying
// while it is not there yet (its pod starts at the same time), until
// timeout: a fabric that is down fails here, with the last error.
func reach(listen, connect string, timeout time.Duration) (net.Conn, error) {
	if listen != "" {
		l, err := net.Listen("tcp", listen)
		if err != nil {
			return nil, err
		}
		defer func() { _ = l.Close() }()
		_ = l.(*net.TCPListener).SetDeadline(time.Now().Add(timeout))
		conn, err := l.Accept()
		if err != nil {
			return nil, fmt.Errorf("the other side did not connect within %s: %w", timeout, err)
		}
		return conn, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var d net.Dialer
	for {
		dctx, dcancel := context.WithTimeout(ctx, 5*time.Second)
		conn, err := d.DialContext(dctx, "tcp", connect)
		dcancel()
		if err == nil {
			return conn, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("cannot reach the other side at %s within %s: %w", connect, timeout, err)
		case <-time.After(time.Second):
		}
	}
}
