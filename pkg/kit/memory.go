package kit

import (
	"context"
	"runtime/debug"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/liqo-go/liqo/pkg/proc"
)

// ReleaseStartupMemory returns, once the caches are filled, the memory the
// start-up freed to the operating system, and unmaps the executable's pages
// it touched. Starting (decoding the CRDs it applies, listing everything its
// caches hold) takes the heap to its peak, and the Go runtime hands freed
// pages back only gradually: an idle process would hold its start-up peak
// in RSS for minutes. The init code of every linked package, run once, kept
// most of the binary's text resident too (proc.ReleaseExecutablePages).
func ReleaseStartupMemory(mgr manager.Manager, logger logr.Logger) func(context.Context) error {
	return func(ctx context.Context) error {
		if !mgr.GetCache().WaitForCacheSync(ctx) {
			return nil
		}
		debug.FreeOSMemory()
		if _, err := proc.ReleaseExecutablePages(); err != nil {
			// Only memory is at stake: the manager runs on.
			logger.Info("could not release the executable's start-up pages", "error", err.Error())
		}
		return nil
	}
}
