package testbed

import (
	"context"
	"fmt"
	"os"
	"slices"
	"time"
)

// BeforeStop registers f to run once the tests are over, before Main
// stops the clusters (the last registered first): what a TestMain started
// on the clusters, such as controller managers, ends while their API
// servers still answer, instead of logging errors until the process exits.
func (tb *Testbed) BeforeStop(f func()) { tb.beforeStop = append(tb.beforeStop, f) }

// Main is the body of a TestMain that shares clusters across a package's
// tests: it starts them, hands the running testbed to use, runs the tests
// (m is the TestMain's *testing.M: only its Run is needed, so that this
// package, which the liqo-playground binary links, does not import
// testing), prints every component's log tail if one failed, stops the
// clusters and exits with the tests' code.
func Main(m interface{ Run() int }, use func(*Testbed), specs ...ClusterSpec) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	tb, err := Start(ctx, Options{Progress: os.Stderr}, specs...)
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "starting the testbed:", err)
		os.Exit(1)
	}
	use(tb)
	code := m.Run()
	if code != 0 {
		tb.DumpLogs(os.Stderr, 30)
	}
	for _, f := range slices.Backward(tb.beforeStop) {
		f()
	}
	check := tb.Leftovers()
	tb.Stop()
	if err := check(); err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: the testbed left things behind after Stop:", err)
		code = 1
	}
	if code == 0 {
		tb.removeLogDirs()
	} else {
		tb.keepLogDirs()
	}
	os.Exit(code)
}
