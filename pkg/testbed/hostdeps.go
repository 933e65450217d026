package testbed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/liqo-go/liqo/pkg/proc"
)

// hostPackage is a Debian package real nodes need, and a file it installs
// (its presence says the package is there, whatever installed it).
type hostPackage struct{ pkg, file string }

// hostPackages are the Debian packages real nodes run on: the container
// runtime, the CNI plugins, the firewall tools kube-proxy and the node rules
// use, nsenter, the static busybox the busybox image is made of, and the
// programs of the MCS conformance suite's images (see suiteImages).
var hostPackages = []hostPackage{
	{"containerd", "/usr/bin/containerd"},
	{"runc", "/usr/sbin/runc"},
	{"containernetworking-plugins", cniBinDir + "/bridge"},
	{"nftables", "/usr/sbin/nft"},
	{"iptables", "/usr/sbin/iptables"},
	{"busybox-static", busyboxPath},
	{"socat", debianSocat},
	{"netcat-openbsd", debianNc},
	{"bind9-dnsutils", debianNslookup},
	{"util-linux", "/usr/bin/nsenter"},
}

// hostPackagesLock serializes the installs of every process on the host
// (two playground owners, a playground beside make test, parallel test
// packages): dpkg admits one install at a time and the second apt-get would
// die on its frontend lock. It lives outside any HOME or cache directory,
// because those differ between the processes that race.
func hostPackagesLock() string {
	const dir = "/run/lock"
	if st, err := os.Stat(dir); err == nil && st.IsDir() {
		return filepath.Join(dir, "liqo-go-host-packages.lock")
	}
	return filepath.Join(os.TempDir(), "liqo-go-host-packages.lock")
}

// aptLockTimeout is how long apt-get waits for dpkg's own lock, held by
// installers that are not ours (unattended upgrades, an administrator).
const aptLockTimeout = "600"

// hostInstaller installs missing host packages; the fields are what a test
// replaces (the lock, the package list, the apt-get program).
type hostInstaller struct {
	packages []hostPackage
	lock     string
	aptGet   string
}

// RealNodesSupported tells why real nodes cannot run here, or nil: they
// need root (network namespaces, cgroups, mounts) and cgroup hierarchies.
func RealNodesSupported() error {
	if os.Geteuid() != 0 {
		return errors.New("real nodes need root (network namespaces, cgroups and mounts): run as root, or use simulated nodes only (--real-nodes 0)")
	}
	mounts, err := cgroupMounts()
	if err != nil || len(mounts) == 0 {
		return fmt.Errorf("real nodes need the cgroup hierarchies mounted under /sys/fs/cgroup (found none: %v)", err)
	}
	return nil
}

// EnsureHostPackages installs, with apt and no recommended packages, the
// Debian packages real nodes need that are missing, once for the whole host:
// concurrent callers wait for the first and then find them installed.
// Without apt it says which packages to install.
func EnsureHostPackages(ctx context.Context, progress io.Writer) error {
	if err := RealNodesSupported(); err != nil {
		return err
	}
	return hostInstaller{packages: hostPackages, lock: hostPackagesLock(), aptGet: "apt-get"}.ensure(ctx, progress)
}

// BrowserPath is the headless browser the dashboard's tests and benchmark
// drive: Debian's Chromium.
const BrowserPath = "/usr/bin/chromium"

// browserPackages are the Debian packages of that browser.
var browserPackages = []hostPackage{{"chromium", BrowserPath}}

// EnsureBrowser installs Debian's Chromium when it is missing, as
// EnsureHostPackages installs the real nodes' packages and under the same
// host-wide lock. Without root or apt it says what to install.
func EnsureBrowser(ctx context.Context, progress io.Writer) error {
	h := hostInstaller{packages: browserPackages, lock: hostPackagesLock(), aptGet: "apt-get"}
	if len(h.missing()) == 0 {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("headless Chromium (%s) is missing: install Debian's chromium package (apt-get install --no-install-recommends chromium), or run as root to have it installed", BrowserPath)
	}
	return h.ensure(ctx, progress)
}

func (h hostInstaller) missing() []string {
	var missing []string
	for _, p := range h.packages {
		if _, err := os.Stat(p.file); err != nil {
			missing = append(missing, p.pkg)
		}
	}
	return missing
}

func (h hostInstaller) ensure(ctx context.Context, progress io.Writer) error {
	if len(h.missing()) == 0 {
		return nil
	}
	unlock, err := lockFile(ctx, h.lock, "installing the host packages", progress)
	if err != nil {
		return err
	}
	defer unlock()
	// Whoever held the lock may have installed them meanwhile.
	missing := h.missing()
	if len(missing) == 0 {
		return nil
	}
	if _, err := exec.LookPath(h.aptGet); err != nil {
		return fmt.Errorf("real nodes need these packages, and apt-get is not here to install them: %s", strings.Join(missing, " "))
	}
	fmt.Fprintf(progress, "testbed: installing %s with apt-get (--no-install-recommends)\n", strings.Join(missing, " "))
	run := func(args ...string) error {
		args = append([]string{"-o", "DPkg::Lock::Timeout=" + aptLockTimeout}, args...)
		cmd := exec.CommandContext(ctx, h.aptGet, args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, proc.LastLines(string(out), 20))
		}
		return nil
	}
	install := append([]string{"install", "-y", "-qq", "--no-install-recommends"}, missing...)
	if err := run(install...); err != nil {
		// The package lists may be missing or stale on a fresh machine.
		if err := run("update", "-qq"); err != nil {
			return err
		}
		if err := run(install...); err != nil {
			return fmt.Errorf("installing the packages real nodes need: %w", err)
		}
	}
	if still := h.missing(); len(still) > 0 {
		return fmt.Errorf("apt-get installed %s, yet these are still missing: %s", strings.Join(missing, " "), strings.Join(still, " "))
	}
	return nil
}
