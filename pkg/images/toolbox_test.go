package images

import (
	"archive/tar"
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The Debian programs the toolbox test copies; the testbed's host packages
// (socat, netcat-openbsd) install them.
const (
	debianSocat = "/usr/bin/socat"
	debianNc    = "/bin/nc.openbsd"
	debianDash  = "/bin/dash"
)

// TestToolboxRuns builds a toolbox image with socat and OpenBSD's nc,
// unpacks it and runs its programs chrooted into it, where nothing of this
// machine is left to load: a socat listener answers through the shell of
// the image, as the socat containers of the MCS conformance suite do, and
// nc reads the answer.
func TestToolboxRuns(t *testing.T) {
	for _, f := range []string{debianBusybox, debianDash, debianSocat, debianNc} {
		if _, err := os.Stat(f); err != nil {
			t.Fatalf("%v: install Debian's busybox-static, socat and netcat-openbsd (liqo-playground build installs them)", err)
		}
	}
	if os.Geteuid() != 0 {
		t.Fatal("running programs in an unpacked image needs chroot, so root (CI runs as root)")
	}
	img, err := Toolbox(debianBusybox, debianDash,
		Program{Path: "/usr/bin/socat", HostFile: debianSocat},
		Program{Path: "/usr/bin/nc", HostFile: debianNc})
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	_, entries := readLayer(t, layers[0])
	for _, want := range []string{"usr/bin/socat", "usr/bin/nc", "etc/nsswitch.conf"} {
		if _, ok := entries[want]; !ok {
			t.Errorf("no %s in the image", want)
		}
	}
	if e := entries["bin/nc"]; e.hdr == nil || e.hdr.Linkname != "/usr/bin/nc" {
		t.Errorf("bin/nc: %+v, want a symlink to the program, not busybox's applet", e.hdr)
	}
	root := unpack(t, entries)

	// The shell finds the programs through PATH (busybox's would run its
	// own applets first wherever /proc is mounted, as in a container).
	out, err := chrooted(context.Background(), root, "sh", "-c", "command -v nc; command -v socat; command -v awk").CombinedOutput()
	if got := strings.Fields(string(out)); err != nil || !slices.Equal(got, []string{"/usr/bin/nc", "/usr/bin/socat", "/bin/awk"}) {
		t.Fatalf("the shell finds %q (%v), want /usr/bin/nc, /usr/bin/socat and busybox's /bin/awk", out, err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strings.TrimPrefix(l.Addr().String(), "127.0.0.1:")
	l.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// exec: socat replaces the shell, so that killing the listener stops
	// socat itself; its own group: the children it forks go with it. A
	// socat left behind would outlive the test with whatever it inherited.
	listener := chrooted(ctx, root, "sh", "-c",
		`exec socat TCP-LISTEN:`+port+`,bind=127.0.0.1,crlf,reuseaddr,fork SYSTEM:'echo "pod ip $first_ip"'`)
	listener.Env = append(listener.Env, "first_ip=192.0.2.1")
	listener.SysProcAttr.Setpgid = true
	listener.Cancel = func() error { return syscall.Kill(-listener.Process.Pid, syscall.SIGKILL) }
	if err := listener.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = syscall.Kill(-listener.Process.Pid, syscall.SIGKILL); _ = listener.Wait() }()

	deadline := time.Now().Add(20 * time.Second)
	for {
		out, err = chrooted(ctx, root, "sh", "-c", "echo hi | nc -v -w 2 -4 127.0.0.1 "+port+" 2>&1").CombinedOutput()
		if strings.Contains(string(out), "pod ip") || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("nc: %s", out)
	if !strings.Contains(string(out), "pod ip 192.0.2.1") || !strings.Contains(string(out), "succeeded") {
		t.Fatalf("nc through the socat listener: %v\n%s", err, out)
	}
}

// chrooted is a command run by the image's shell inside root.
func chrooted(ctx context.Context, root string, name string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Path = "/bin/" + name
	cmd.Dir = "/"
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root}
	return cmd
}

// unpack writes a layer's entries into a new directory.
func unpack(t *testing.T, entries map[string]tarEntry) string {
	t.Helper()
	root := t.TempDir()
	for name, e := range entries {
		p := filepath.Join(root, name)
		var err error
		switch e.hdr.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(p, os.FileMode(e.hdr.Mode&0o777))
		case tar.TypeSymlink:
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.Symlink(e.hdr.Linkname, p)
			}
		default:
			if err = os.MkdirAll(filepath.Dir(p), 0o755); err == nil {
				err = os.WriteFile(p, e.data, os.FileMode(e.hdr.Mode&0o777))
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return root
}
