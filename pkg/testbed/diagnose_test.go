package testbed

import "testing"

// TestDiagnose: the failures Start retries are recognised in a
// component's last log lines.
func TestDiagnose(t *testing.T) {
	kwokTrace := `sigs.k8s.io/kwok@v0.8.0/pkg/utils/cel/environment.go:52 +0x25c
sigs.k8s.io/kwok/pkg/utils/lifecycle.(*Stage).init(0x340d9c9dc6c0, 0x340d9ccfcba0)
	sigs.k8s.io/kwok@v0.8.0/pkg/utils/lifecycle/lifecycle.go:215 +0x31b`
	// The crash seen with only the main goroutine's frames in the tail.
	kwokMetricsTrace := `sigs.k8s.io/kwok/pkg/kwok/server.(*Server).InstallMetrics(0x12c5637c2000, {0x39b1d38, 0x12c5637b8390})
	sigs.k8s.io/kwok@v0.8.0/pkg/kwok/server/metrics.go:60 +0x3c
sigs.k8s.io/kwok/pkg/kwok/cmd.runE({0x39b1d38, 0x12c5637b8390}, 0x12c5637b83c0)
	sigs.k8s.io/kwok@v0.8.0/pkg/kwok/cmd/root.go:434 +0xc9e`
	for log, want := range map[string]string{
		kwokMetricsTrace: kwokRaceHint,
		"listen tcp 127.0.0.1:2379: bind: address already in use": portTakenHint,
		kwokTrace:                            kwokRaceHint,
		"open /var/lib/x: permission denied": "it lacks a permission it needs (see the log below)",
		"something else went wrong":          "",
	} {
		if got := diagnose(log); got != want {
			t.Errorf("diagnose(%q) = %q, want %q", log, got, want)
		}
	}
}
