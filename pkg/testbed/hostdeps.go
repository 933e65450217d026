package testbed

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/liqo-go/liqo/pkg/proc"
)

// hostPackages are the Debian packages real nodes run on: the container
// runtime, the CNI plugins, the firewall tools kube-proxy and the node rules
// use, nsenter, and the static busybox the busybox image is made of.
var hostPackages = []struct{ pkg, file string }{
	{"containerd", "/usr/bin/containerd"},
	{"runc", "/usr/sbin/runc"},
	{"containernetworking-plugins", cniBinDir + "/bridge"},
	{"nftables", "/usr/sbin/nft"},
	{"iptables", "/usr/sbin/iptables"},
	{"busybox-static", "/bin/busybox"},
	{"util-linux", "/usr/bin/nsenter"},
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
// Debian packages real nodes need that are missing. Without apt it says
// which packages to install.
func EnsureHostPackages(progress io.Writer) error {
	var missing []string
	for _, p := range hostPackages {
		if _, err := os.Stat(p.file); err != nil {
			missing = append(missing, p.pkg)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if err := RealNodesSupported(); err != nil {
		return err
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("real nodes need these packages, and apt-get is not here to install them: %s", strings.Join(missing, " "))
	}
	fmt.Fprintf(progress, "testbed: installing %s with apt-get (--no-install-recommends)\n", strings.Join(missing, " "))
	run := func(args ...string) error {
		cmd := exec.Command("apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, proc.LastLines(string(out), 20))
		}
		return nil
	}
	if err := run("install", "-y", "-qq", "--no-install-recommends", missing[0]); err != nil {
		// The package lists may be missing or stale on a fresh machine.
		if err := run("update", "-qq"); err != nil {
			return err
		}
	}
	if err := run(append([]string{"install", "-y", "-qq", "--no-install-recommends"}, missing...)...); err != nil {
		return fmt.Errorf("installing the packages real nodes need: %w", err)
	}
	return nil
}
