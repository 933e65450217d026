package proc

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func TestLastLines(t *testing.T) {
	cases := []struct {
		in   string
		n    int
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc"},
		{"a\nb", 5, "a\nb"},
		{"", 3, ""},
	}
	for _, c := range cases {
		if got := LastLines(c.in, c.n); got != c.want {
			t.Errorf("LastLines(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}

func TestTailFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(p, []byte("1\n2\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := TailFile(p, 1); got != "3" {
		t.Errorf("TailFile = %q, want 3", got)
	}
	if got := TailFile(p+"-missing", 1); got == "" {
		t.Error("TailFile of a missing file says nothing")
	}
}

func TestAliveArgsChildren(t *testing.T) {
	if !Alive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	// Until the child has exec'd, its command line is still the parent's.
	var args []string
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if args = Args(pid); len(args) == 2 && args[1] == "30" {
			break
		}
	}
	if len(args) != 2 || args[1] != "30" {
		t.Errorf("Args = %q, want [sleep 30]", args)
	}
	found := false
	for _, k := range Children(os.Getpid()) {
		found = found || k == pid
	}
	if !found {
		t.Errorf("child %d not listed among %v", pid, Children(os.Getpid()))
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if Alive(pid) {
		t.Errorf("process %d alive after kill and wait", pid)
	}
	if Alive(0) || Alive(-1) {
		t.Error("non-positive PIDs reported alive")
	}
}

func TestUsageOf(t *testing.T) {
	// Burn a little CPU so the figure cannot be zero by accident.
	deadline := time.Now().Add(50 * time.Millisecond)
	for x := 0; time.Now().Before(deadline); x++ {
		_ = x * x
	}
	u, err := UsageOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.RSS < 1<<20 || u.RSS > 1<<36 {
		t.Errorf("RSS %d bytes is not plausible for a Go test binary", u.RSS)
	}
	// The kernel rounds each part to pages on its own: allow a few.
	if d := u.RSS - u.RSSAnon - u.RSSFile; u.RSSAnon <= 0 || u.RSSFile <= 0 || d < -1<<16 || d > 1<<16 {
		t.Errorf("RSS %d is not anonymous %d + file-backed %d", u.RSS, u.RSSAnon, u.RSSFile)
	}
	if u.CPU <= 0 {
		t.Errorf("CPU time %v, want > 0 after spinning", u.CPU)
	}
	if _, err := UsageOf(-1); err == nil {
		t.Errorf("UsageOf(-1) did not fail")
	}
	// PSS divides shared pages, so it cannot exceed RSS, and this
	// process's own heap alone makes it more than its anonymous part's
	// half.
	pss, err := PSSOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if after, _ := UsageOf(os.Getpid()); pss <= 0 || pss > after.RSS+1<<20 || pss < after.RSSAnon/2 {
		t.Errorf("PSS %d bytes, RSS %d (anonymous %d)", pss, after.RSS, after.RSSAnon)
	}
	if _, err := PSSOf(-1); err == nil {
		t.Errorf("PSSOf(-1) did not fail")
	}
}

func TestReleaseExecutablePages(t *testing.T) {
	before, err := UsageOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	released, err := ReleaseExecutablePages()
	if err != nil {
		t.Fatal(err)
	}
	after, err := UsageOf(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// The test binary's text is megabytes; what runs between the release
	// and the reading faults back a few pages only.
	if released < 1<<20 || after.RSSFile >= before.RSSFile {
		t.Errorf("released mappings of %d bytes: file-backed RSS %d → %d bytes", released, before.RSSFile, after.RSSFile)
	}
	t.Logf("released mappings of %d MB: file-backed RSS %d → %d kB", released>>20, before.RSSFile>>10, after.RSSFile>>10)
	// Still runs: code and read-only data come back from the page cache.
	if _, err := UsageOf(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}

// TestReleasableMappings: of an executable's mappings, only the read-only
// ones without private copies go; the RELRO part the dynamic loader wrote
// relocations into (r--p, with anonymous pages) stays, or the process
// would jump through zeroed pointers.
func TestReleasableMappings(t *testing.T) {
	const smaps = `00400000-01f07000 r-xp 00000000 fe:00 42 /bin/manager
Rss:               22280 kB
Anonymous:             0 kB
01f07000-03eaa000 r--p 01b07000 fe:00 42 /bin/manager
Anonymous:             0 kB
03eaa000-03eac000 r--p 03aaa000 fe:00 42 /bin/manager
Anonymous:             8 kB
03eac000-03f2e000 rw-p 03aac000 fe:00 42 /bin/manager
Anonymous:           120 kB
7f0000000000-7f0000100000 r-xp 00000000 fe:00 7 /lib/libc.so.6
Anonymous:             0 kB
7f0000200000-7f0000300000 r-xp 00000000 fe:00 42 /bin/manager
`
	var got []uint64
	for _, m := range parseSmaps([]byte(smaps)) {
		if m.releasable(42) {
			got = append(got, m.start)
		}
	}
	// The text and read-only data; not the RELRO pages, the writable data,
	// another file's mapping, nor one whose Anonymous line is missing.
	if want := []uint64{0x400000, 0x1f07000}; !slices.Equal(got, want) {
		t.Errorf("releasable mappings start at %x, want %x", got, want)
	}
}
