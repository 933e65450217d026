package harness

import (
	"strings"
	"testing"
)

// PeerCommand is the `liqoctl peer out-of-band ...` line in the output of
// liqoctl generate peer-command, which may print other lines around it.
func PeerCommand(t testing.TB, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "liqoctl peer out-of-band ") {
			return strings.TrimSpace(l)
		}
	}
	t.Fatalf("no liqoctl peer out-of-band line in:\n%s", out)
	return ""
}

// FlagOf is the value following flag in a command line.
func FlagOf(t testing.TB, line, flag string) string {
	t.Helper()
	f := strings.Fields(line)
	for i := range f[:len(f)-1] {
		if f[i] == flag {
			return f[i+1]
		}
	}
	t.Fatalf("no %s in %s", flag, line)
	return ""
}
