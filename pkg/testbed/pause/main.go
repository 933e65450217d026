// Command pause is the sandbox ("infrastructure") container of every pod on
// the testbed's real nodes: it holds the pod's namespaces open, reaps the
// zombies of a pod that shares its PID namespace, and exits on SIGINT or
// SIGTERM. The testbed builds it statically into the pause image it serves
// as registry.k8s.io/pause, since no image can be pulled from outside.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	if os.Getpid() != 1 {
		_, _ = os.Stderr.WriteString("pause: warning: not running as PID 1\n")
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGCHLD)
	for sig := range sigs {
		if sig != syscall.SIGCHLD {
			os.Exit(0)
		}
		for {
			var status syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
