package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTick is the kernel's USER_HZ, the unit of /proc/<pid>/stat times;
// 100 on every Linux architecture Go supports.
const clockTick = 100

// Usage is a process's resident memory and CPU time so far.
type Usage struct {
	RSS int64 // bytes
	// RSSAnon and RSSFile split RSS: the process's own memory (heap,
	// stacks) and the pages of files it maps (its binary's text).
	RSSAnon, RSSFile int64
	// PSS is RSS with each page shared with other processes divided among
	// them (two processes of one binary count its pages once between
	// them): what several processes hold together is the sum of their
	// PSS. Only PSSOf fills it in: the kernel walks the page tables for it.
	PSS int64
	CPU time.Duration
}

// UsageOf reads the usage of a live process from /proc.
func UsageOf(pid int) (Usage, error) {
	var u Usage
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return u, err
	}
	// Fields after the parenthesized command name, which may hold spaces:
	// state is field 3, utime and stime fields 14 and 15.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return u, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return u, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return u, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	u.CPU = time.Duration(utime+stime) * time.Second / clockTick
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return u, err
	}
	fields := map[string]*int64{"VmRSS": &u.RSS, "RssAnon": &u.RSSAnon, "RssFile": &u.RSSFile}
	for _, line := range strings.Split(string(status), "\n") {
		name, rest, _ := strings.Cut(line, ":")
		if to, ok := fields[name]; ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return u, fmt.Errorf("unexpected %s in /proc/%d/status: %q", name, pid, rest)
			}
			*to = kb * 1024
		}
	}
	return u, nil
}

// PSSOf reads the proportional set size of a live process, in bytes
// (/proc/<pid>/smaps_rollup).
func PSSOf(pid int) (int64, error) {
	rollup, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(rollup), "\n") {
		if rest, ok := strings.CutPrefix(line, "Pss:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("unexpected Pss in /proc/%d/smaps_rollup: %q", pid, rest)
			}
			return kb * 1024, nil
		}
	}
	return 0, fmt.Errorf("no Pss in /proc/%d/smaps_rollup", pid)
}
