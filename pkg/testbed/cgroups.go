package testbed

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// cgroupBase is the cgroup every real node's processes live under, in every
// hierarchy: /liqo-testbed/<underlay>/s<slot>/<node>/{system,pods}. The
// container shims outlive containerd, and the containers outlive both, so a
// node is stopped by killing everything in its cgroup subtree rather than by
// remembering PIDs.
const cgroupBase = "liqo-testbed"

// cgroupMounts lists the mount points of the cgroup hierarchies (v1
// controllers, named hierarchies and the v2 unified one).
func cgroupMounts() ([]string, error) {
	f, err := os.Open("/proc/self/mounts")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var mounts []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 3 && (fields[2] == "cgroup" || fields[2] == "cgroup2") {
			mounts = append(mounts, fields[1])
		}
	}
	return mounts, sc.Err()
}

// checkCgroupPath refuses to touch anything outside the testbed's subtree.
func checkCgroupPath(rel string) error {
	clean := filepath.Clean("/" + rel)
	if !strings.HasPrefix(clean, "/"+cgroupBase+"/") {
		return fmt.Errorf("cgroup %q is not under /%s", rel, cgroupBase)
	}
	return nil
}

// cgroupMu serializes cgroup creation: two nodes created at once share
// parents, and a parent must have its cpuset before a child copies it.
var cgroupMu sync.Mutex

// createCgroup makes rel in every hierarchy. cpuset cgroups start with no CPU
// and no memory node, so each level gets its parent's where it has none
// (another process may have made the level without setting it yet).
func createCgroup(rel string) error {
	if err := checkCgroupPath(rel); err != nil {
		return err
	}
	cgroupMu.Lock()
	defer cgroupMu.Unlock()
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		dir := m
		for _, part := range strings.Split(strings.Trim(filepath.Clean(rel), "/"), "/") {
			parent := dir
			dir = filepath.Join(dir, part)
			if err := os.Mkdir(dir, 0o755); err != nil && !os.IsExist(err) {
				return fmt.Errorf("creating cgroup %s: %w", dir, err)
			}
			for _, f := range []string{"cpuset.cpus", "cpuset.mems"} {
				if own, err := os.ReadFile(filepath.Join(dir, f)); err != nil || len(strings.TrimSpace(string(own))) > 0 {
					continue
				}
				if data, err := os.ReadFile(filepath.Join(parent, f)); err == nil {
					if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
						return fmt.Errorf("initializing %s: %w", filepath.Join(dir, f), err)
					}
				}
			}
		}
	}
	return nil
}

// addToCgroup moves a process into rel in every hierarchy.
func addToCgroup(rel string, pid int) error {
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	for _, m := range mounts {
		procs := filepath.Join(m, rel, "cgroup.procs")
		if err := os.WriteFile(procs, []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("moving process %d into %s: %w", pid, procs, err)
		}
	}
	return nil
}

// cgroupPIDs lists every process in rel and its descendants, in every
// hierarchy.
func cgroupPIDs(rel string) map[int]bool {
	pids := map[int]bool{}
	mounts, _ := cgroupMounts()
	for _, m := range mounts {
		_ = filepath.WalkDir(filepath.Join(m, rel), func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.IsDir() {
				return nil
			}
			data, _ := os.ReadFile(filepath.Join(path, "cgroup.procs"))
			for _, line := range strings.Fields(string(data)) {
				if pid, err := strconv.Atoi(line); err == nil {
					pids[pid] = true
				}
			}
			return nil
		})
	}
	return pids
}

// removeCgroupTree kills every process in rel's subtree and removes the
// subtree from every hierarchy. The freezer stops the processes first, so
// none can fork a new one between the listing and the kill.
func removeCgroupTree(rel string) error {
	if err := checkCgroupPath(rel); err != nil {
		return err
	}
	mounts, err := cgroupMounts()
	if err != nil {
		return err
	}
	freezer := ""
	for _, m := range mounts {
		if _, err := os.Stat(filepath.Join(m, rel, "freezer.state")); err == nil {
			freezer = filepath.Join(m, rel, "freezer.state")
		}
	}
	// One 15 s budget for the kills and the removals together.
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_ = wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		pids := cgroupPIDs(rel)
		if len(pids) == 0 {
			return true, nil
		}
		if freezer != "" {
			_ = os.WriteFile(freezer, []byte("FROZEN"), 0o644)
		}
		for pid := range cgroupPIDs(rel) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		if freezer != "" {
			_ = os.WriteFile(freezer, []byte("THAWED"), 0o644)
		}
		return false, nil
	})
	// Looked at once more: the last kill may have done it.
	if n := len(cgroupPIDs(rel)); n > 0 {
		return fmt.Errorf("cgroup %s: %d processes survive SIGKILL", rel, n)
	}
	var errs []string
	for _, m := range mounts {
		root := filepath.Join(m, rel)
		var dirs []string
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				dirs = append(dirs, path)
			}
			return nil
		})
		// Deepest first: a cgroup with children cannot be removed.
		sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
		for _, d := range dirs {
			if err := removeCgroupDir(ctx, d); err != nil {
				errs = append(errs, err.Error())
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("removing cgroups: %s", strings.Join(errs, "; "))
	}
	return nil
}

// removeCgroupDir retries rmdir: a killed process leaves its cgroup a moment
// after it is reaped.
func removeCgroupDir(ctx context.Context, dir string) error {
	var last error
	// Immediate: a directory gets one try even when the kills used up ctx.
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		last = syscall.Rmdir(dir)
		return last == nil || os.IsNotExist(last), nil
	})
	if err != nil {
		return fmt.Errorf("%s: %w", dir, last)
	}
	return nil
}

// pruneEmptyCgroups removes rel and its ancestors up to the testbed's base
// where they have no children left (a shared parent is kept while in use).
func pruneEmptyCgroups(rel string) {
	mounts, _ := cgroupMounts()
	for _, m := range mounts {
		for dir := filepath.Join(m, rel); strings.HasPrefix(dir, filepath.Join(m, cgroupBase)); dir = filepath.Dir(dir) {
			if syscall.Rmdir(dir) != nil {
				break
			}
		}
	}
}
