// Command liqoctl drives the multi-cluster federation: peering, offloading
// and the local playground.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/liqo-go/liqo/pkg/liqoctl"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := liqoctl.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
