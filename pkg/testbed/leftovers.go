package testbed

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/liqo-go/liqo/pkg/proc"
	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// footprint is what a testbed runs and made on the host.
type footprint struct {
	PIDs   []int  `json:"pids"`
	Ports  []int  `json:"ports"`
	Dir    string `json:"dir"`
	OwnDir bool   `json:"ownDir"`
	// NodeNS are the name prefixes of the real nodes' network namespaces.
	NodeNS []string `json:"nodeNS"`
	// Cgroups are the real nodes' parent cgroups, and those of clusters
	// pinned to CPUs.
	Cgroups     []string `json:"cgroups"`
	Underlay    string   `json:"underlay"`
	OwnUnderlay bool     `json:"ownUnderlay"`
}

func (tb *Testbed) footprint() footprint {
	f := footprint{Dir: tb.Dir, OwnDir: tb.ownDir, Underlay: tb.underlay, OwnUnderlay: tb.ownUnderlay}
	for _, c := range tb.Clusters {
		for _, pid := range c.PIDs() {
			f.PIDs = append(f.PIDs, pid)
		}
		f.Ports = append(f.Ports, c.Ports()...)
		if c.slot != nil {
			f.NodeNS = append(f.NodeNS, slotNodeNSPrefix(c.slot.underlay, c.slot.n))
			f.Cgroups = append(f.Cgroups, c.slot.cgroup())
		}
		if pinned := c.pinnedCgroup(); pinned != "" {
			f.Cgroups = append(f.Cgroups, pinned)
		}
	}
	return f
}

// Leftovers records what the testbed runs and made on the host, and returns
// a check to call after Stop that lists whatever is left of it: processes,
// bound ports, the directory (if Start made it), and for real nodes their
// network namespaces, cgroups, mounts and the processes in those cgroups.
func (tb *Testbed) Leftovers() func() error { return tb.footprint().check }

func (f footprint) check() error {
	var errs []error
	if len(f.PIDs) == 0 {
		errs = append(errs, errors.New("no process was recorded, so nothing could be checked"))
	}
	for _, pid := range f.PIDs {
		if proc.Alive(pid) {
			errs = append(errs, fmt.Errorf("process %d is still alive", pid))
		}
	}
	for _, port := range f.Ports {
		if portBound(port) {
			errs = append(errs, fmt.Errorf("port %d is still bound", port))
		}
	}
	if f.OwnDir {
		if _, err := os.Stat(f.Dir); !os.IsNotExist(err) {
			errs = append(errs, fmt.Errorf("directory %s still exists (%v)", f.Dir, err))
		}
	}
	if mounts := mountsUnder(f.Dir); len(mounts) > 0 {
		errs = append(errs, fmt.Errorf("%d mounts left under %s, such as %s", len(mounts), f.Dir, mounts[0]))
	}
	for _, prefix := range f.NodeNS {
		if left := netns.List(prefix); len(left) > 0 {
			errs = append(errs, fmt.Errorf("network namespaces left: %v", left))
		}
	}
	if f.OwnUnderlay && netns.Exists(underlayNS(f.Underlay)) {
		errs = append(errs, fmt.Errorf("the underlay namespace %s is left", underlayNS(f.Underlay)))
	}
	mounts, _ := cgroupMounts()
	for _, cg := range f.Cgroups {
		if n := len(cgroupPIDs(cg)); n > 0 {
			errs = append(errs, fmt.Errorf("%d processes left in cgroup %s", n, cg))
		}
		for _, m := range mounts {
			if _, err := os.Stat(filepath.Join(m, cg)); err == nil {
				errs = append(errs, fmt.Errorf("cgroup %s is left", filepath.Join(m, cg)))
			}
		}
	}
	return errors.Join(errs...)
}

// SweepHost removes what crashed testbeds left on this machine: the real
// nodes of owners that are gone (their container processes, mounts, network
// namespaces and cgroups), unused underlays and, once none is left, the
// root namespace's unreachable routes. Start does it before making real
// nodes; without root, or with no real node ever started, it does nothing.
func SweepHost() error {
	if os.Geteuid() != 0 {
		return nil
	}
	if _, err := os.Stat(hostStateDir); err != nil {
		return nil
	}
	return withHostLock(func() error {
		sweepHost()
		return nil
	})
}
