// Command liqo-playground runs local Kubernetes clusters with liqo-go
// installed and peered, to try it on one Linux machine: `make playground`
// runs it, and so does `liqoctl playground`, which passes it its arguments.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/liqo-go/liqo/pkg/playground"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := playground.NewCommand().ExecuteContext(ctx)
	stop()
	if err != nil {
		os.Exit(1)
	}
}
