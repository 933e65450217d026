package testbed

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// hostPackagesHelperEnv runs the test binary as one process installing the
// host packages: its value is the directory of the fake apt-get.
const hostPackagesHelperEnv = "LIQO_TESTBED_HOSTPKG_HELPER"

// fakeAptGet behaves as apt-get does when two installs race: dpkg's
// frontend lock admits one, the other dies with apt's message. The install
// takes a second, so that two processes started together overlap.
const fakeAptGet = `#!/bin/sh
dir=$(dirname "$0")
mkdir "$dir/dpkg.lock" 2>/dev/null || {
  echo "E: Could not get lock $dir/dpkg.lock. It is held by another process" >&2
  echo "E: Unable to acquire the dpkg frontend lock, is another process using it?" >&2
  exit 100
}
echo "$*" >> "$dir/calls"
sleep 1
for a in "$@"; do case $a in pkg-*) touch "$dir/$a" ;; esac; done
rmdir "$dir/dpkg.lock"
`

func fakeInstaller(dir string) hostInstaller {
	return hostInstaller{
		packages: []hostPackage{{"pkg-a", filepath.Join(dir, "pkg-a")}, {"pkg-b", filepath.Join(dir, "pkg-b")}},
		lock:     filepath.Join(dir, "host-packages.lock"),
		aptGet:   filepath.Join(dir, "apt-get"),
	}
}

// runHostPackagesHelper is the body of one installing process.
func runHostPackagesHelper(dir string) {
	if err := fakeInstaller(dir).ensure(context.Background(), os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// Two processes that need the host packages at once (two playground
// owners, a playground beside make test) both succeed, and apt-get installs
// once: the second waits for the first and then finds the packages there.
func TestHostPackagesInstalledOnce(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "apt-get"), []byte(fakeAptGet), 0o755); err != nil {
		t.Fatal(err)
	}
	var helpers []*exec.Cmd
	var outputs []*bytes.Buffer
	for range 2 {
		helper := exec.Command(os.Args[0], "-test.run=^$")
		helper.Env = append(os.Environ(), hostPackagesHelperEnv+"="+dir)
		out := &bytes.Buffer{}
		helper.Stdout, helper.Stderr = out, out
		if err := helper.Start(); err != nil {
			t.Fatal(err)
		}
		helpers, outputs = append(helpers, helper), append(outputs, out)
	}
	for i, h := range helpers {
		if err := h.Wait(); err != nil {
			t.Errorf("process %d: %v\n%s", i, err, outputs[i])
		}
	}
	calls, err := os.ReadFile(filepath.Join(dir, "calls"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(calls)), "\n")
	if len(lines) != 1 || !strings.Contains(lines[0], "install") || !strings.Contains(lines[0], "pkg-a pkg-b") ||
		!strings.Contains(lines[0], "DPkg::Lock::Timeout=") {
		t.Errorf("apt-get ran %d times, want one install of pkg-a pkg-b waiting for dpkg's lock:\n%s", len(lines), calls)
	}
	if missing := fakeInstaller(dir).missing(); len(missing) > 0 {
		t.Errorf("still missing after both processes: %v", missing)
	}
}
