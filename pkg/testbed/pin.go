package testbed

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// PinCPUs runs the cluster's components, and the processes pids (say a
// controller manager the caller started for it), on the CPUs cpus only (a
// cpuset list: "1", "0-1"), through a cpuset cgroup of their own. A
// benchmark gives each cluster its own cores so, as clusters on machines
// of their own would have: two clusters on shared cores make whichever
// path involves both pay for both. Threads and children started later
// stay pinned; a component the testbed restarts after a crash does not.
// Stop kills what is left in the cgroup and removes it. Clusters with real
// nodes cannot be pinned: their processes live in the nodes' cgroups.
func (c *Cluster) PinCPUs(cpus string, pids ...int) error {
	if len(c.realNodes) > 0 {
		return fmt.Errorf("cluster %s has real nodes, whose processes are in the nodes' cgroups: it cannot be pinned", c.Name)
	}
	cpusetRoot, err := cpusetMount()
	if err != nil {
		return err
	}
	rel := c.pinCgroup()
	if err := createCgroup(rel); err != nil {
		return err
	}
	c.mu.Lock()
	c.pinned = rel
	c.mu.Unlock()
	if err := os.WriteFile(filepath.Join(cpusetRoot, rel, "cpuset.cpus"), []byte(cpus), 0o644); err != nil {
		return fmt.Errorf("pinning cluster %s to CPUs %s: %w", c.Name, cpus, err)
	}
	for _, pid := range slices.AppendSeq(pids, maps.Values(c.PIDs())) {
		if err := addToCgroup(rel, pid); err != nil {
			return fmt.Errorf("pinning cluster %s: %w", c.Name, err)
		}
	}
	return nil
}

// pinCgroup is the cgroup of PinCPUs: one per cluster directory, which
// is unique on the machine.
func (c *Cluster) pinCgroup() string {
	return filepath.Join(cgroupBase, "pinned", strings.ReplaceAll(strings.Trim(c.Dir, "/"), "/", "_"))
}

// pinnedCgroup is the cgroup of PinCPUs, empty if the cluster is not
// pinned.
func (c *Cluster) pinnedCgroup() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.pinned
}

// unpin removes the cgroup of PinCPUs, killing whatever is still in it,
// and its parent once no other cluster is pinned.
func (c *Cluster) unpin() error {
	c.mu.Lock()
	rel := c.pinned
	c.pinned = ""
	c.mu.Unlock()
	if rel == "" {
		return nil
	}
	err := removeCgroupTree(rel)
	// The parent is shared by every pinned cluster: gone with the last.
	pruneEmptyCgroups(filepath.Dir(rel))
	return err
}

// cpusetMount is the root of the cgroup v1 cpuset hierarchy (the
// testbed's cgroups are v1: createCgroup enables no controller, as the
// unified hierarchy would need).
func cpusetMount() (string, error) {
	mounts, err := cgroupMounts()
	if err != nil {
		return "", err
	}
	for _, m := range mounts {
		if _, err := os.Stat(filepath.Join(m, "cpuset.cpus")); err == nil {
			return m, nil
		}
	}
	return "", fmt.Errorf("no cgroup v1 cpuset hierarchy is mounted")
}
