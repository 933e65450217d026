package testbed

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/liqo-go/liqo/pkg/testbed/netns"
)

// The underlay is the "internet" between the testbed's clusters: a bridge
// inside a network namespace of its own, where every real node has a veth
// with an address unique across clusters, and where each cluster's API
// server and registry are reachable through forwarders. Testbeds that name
// the same underlay (the playground's clusters, one process each) share it.
//
// Each cluster on an underlay claims a slot n (1..maxSlots): its API server
// and registry answer at 172.31.n.1, its nodes are 172.31.n.10, .11, ...
const (
	underlayPrefix = "172.31.0.0/16"
	underlayBridge = "ul0"
	maxSlots       = 250
	// netnsPrefix starts the name of every namespace the testbed makes.
	netnsPrefix = "lqtb-"
)

var underlayNet = netip.MustParsePrefix(underlayPrefix)

// newUnderlayName returns a fresh underlay name for a testbed of its own.
func newUnderlayName() string {
	b := make([]byte, 3)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// UnderlayNameFor derives a stable underlay name from a directory, so the
// playground's clusters, started by separate processes, meet on one underlay.
func UnderlayNameFor(dir string) string {
	h := uint32(2166136261)
	for _, c := range []byte(dir) {
		h = (h ^ uint32(c)) * 16777619
	}
	return fmt.Sprintf("p%05x", h&0xfffff)
}

// checkUnderlayName keeps names short enough for link names (15 bytes)
// built from them, and free of the separator the namespace names use.
func checkUnderlayName(s string) error {
	if s == "" || len(s) > 8 || strings.ContainsAny(s, "-/ ") {
		return fmt.Errorf("underlay name %q must be 1 to 8 characters without '-', '/' or spaces", s)
	}
	return nil
}

func underlayDir(name string) string { return filepath.Join(hostStateDir, "u-"+name) }
func underlayNS(name string) string  { return netnsPrefix + name }

// slot is one cluster's place on an underlay, held (flocked) for the life of
// the cluster.
type slot struct {
	underlay string
	n        int
	lock     *lockedFile
}

// slotRecord is what a slot's file says about its owner, for the sweep.
type slotRecord struct {
	PID     int    `json:"pid"`
	Cluster string `json:"cluster"`
	// Dir is the cluster's directory: every mount of its nodes is below it.
	Dir string `json:"dir"`
}

func (s *slot) addr() netip.Addr { return slotAddr(s.n, 1) }

// nodeAddr is the underlay address of the cluster's i-th real node.
func (s *slot) nodeAddr(i int) netip.Addr { return slotAddr(s.n, 10+i) }

func slotAddr(n, host int) netip.Addr {
	b := underlayNet.Addr().As4()
	return netip.AddrFrom4([4]byte{b[0], b[1], byte(n), byte(host)})
}

func (s *slot) ns() string { return underlayNS(s.underlay) }

// nodeNS names the network namespace of the cluster's i-th real node.
func (s *slot) nodeNS(i int) string { return slotNodeNSPrefix(s.underlay, s.n) + strconv.Itoa(i) }

func slotNodeNSPrefix(underlay string, n int) string {
	return fmt.Sprintf("%s%s-s%d-", netnsPrefix, underlay, n)
}

// cgroup is the parent cgroup of the slot's nodes.
func (s *slot) cgroup() string { return slotCgroup(s.underlay, s.n) }

func slotCgroup(underlay string, n int) string {
	return fmt.Sprintf("%s/%s/s%d", cgroupBase, underlay, n)
}

// joinUnderlay claims a slot on the named underlay, creating the underlay
// (and the root namespace's unreachable routes for every testbed range) if
// it is the first, after sweeping whatever dead testbeds left behind.
func joinUnderlay(name string, routes []netip.Prefix, rec slotRecord) (*slot, error) {
	if err := checkUnderlayName(name); err != nil {
		return nil, err
	}
	var s *slot
	err := withHostLock(func() error {
		sweepHost()
		if err := addUnreachableRoutes(append([]netip.Prefix{underlayNet}, routes...)); err != nil {
			return err
		}
		if err := ensureUnderlay(name); err != nil {
			return err
		}
		var err error
		if s, err = claimSlot(name); err != nil {
			return err
		}
		rec.PID = os.Getpid()
		data, _ := json.Marshal(rec)
		if err := s.lock.write(data); err != nil {
			s.lock.unlock(true)
			return err
		}
		if err := bridgeAddr(name, s.addr(), true); err != nil {
			s.lock.unlock(true)
			return err
		}
		return nil
	})
	return s, err
}

func ensureUnderlay(name string) error {
	if err := os.MkdirAll(underlayDir(name), 0o755); err != nil {
		return err
	}
	ns := underlayNS(name)
	if !netns.Exists(ns) {
		if err := netns.Create(ns); err != nil {
			return err
		}
	}
	h, err := netns.Netlink(ns)
	if err != nil {
		return err
	}
	defer h.Close()
	if _, err := h.LinkByName(underlayBridge); err == nil {
		return nil
	}
	br := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: underlayBridge}}
	if err := h.LinkAdd(br); err != nil {
		return fmt.Errorf("creating the underlay bridge: %w", err)
	}
	return h.LinkSetUp(br)
}

// claimSlot takes the lowest slot whose file nobody holds.
func claimSlot(name string) (*slot, error) {
	for n := 1; n <= maxSlots; n++ {
		lf, ok, err := tryLock(filepath.Join(underlayDir(name), "slot-"+strconv.Itoa(n)))
		if err != nil {
			return nil, err
		}
		if ok {
			return &slot{underlay: name, n: n, lock: lf}, nil
		}
	}
	return nil, fmt.Errorf("underlay %s has no free slot: %d clusters already use it", name, maxSlots)
}

// bridgeAddr adds or removes an address of the underlay bridge.
func bridgeAddr(name string, a netip.Addr, add bool) error {
	h, err := netns.Netlink(underlayNS(name))
	if err != nil {
		return err
	}
	defer h.Close()
	br, err := h.LinkByName(underlayBridge)
	if err != nil {
		return err
	}
	addr := &netlink.Addr{IPNet: &net.IPNet{IP: a.AsSlice(), Mask: net.CIDRMask(underlayNet.Bits(), 32)}}
	if add {
		if err := h.AddrReplace(br, addr); err != nil {
			return fmt.Errorf("adding %s to the underlay bridge: %w", a, err)
		}
		return nil
	}
	if err := h.AddrDel(br, addr); err != nil && !errors.Is(err, unix.EADDRNOTAVAIL) {
		return err
	}
	return nil
}

// leave releases the slot; the last cluster to leave removes the underlay,
// and the last underlay removes the root namespace's routes. The slot's
// nodes must be gone already.
func (s *slot) leave() error {
	return withHostLock(func() error {
		err := bridgeAddr(s.underlay, s.addr(), false)
		pruneEmptyCgroups(s.cgroup())
		s.lock.unlock(true)
		return errors.Join(err, removeUnusedUnderlays())
	})
}

// removeUnusedUnderlays deletes underlays with no slot held, and the routes
// once no underlay is left. Call it with the host lock held.
func removeUnusedUnderlays() error {
	var errs []error
	dirs, _ := filepath.Glob(filepath.Join(hostStateDir, "u-*"))
	left := 0
	for _, d := range dirs {
		name := strings.TrimPrefix(filepath.Base(d), "u-")
		slots, _ := filepath.Glob(filepath.Join(d, "slot-*"))
		if len(slots) > 0 {
			left++
			continue
		}
		if err := netns.Delete(underlayNS(name)); err != nil {
			errs = append(errs, err)
			left++
			continue
		}
		pruneEmptyCgroups(cgroupBase + "/" + name)
		_ = os.RemoveAll(d)
	}
	if left == 0 {
		errs = append(errs, removeUnreachableRoutes())
	}
	return errors.Join(errs...)
}

// routesFile lists the unreachable routes the testbed added to the root
// namespace, so it removes those and only those.
func routesFile() string { return filepath.Join(hostStateDir, "routes") }

// addUnreachableRoutes makes the root namespace drop packets to the testbed's
// ranges instead of sending them out of the machine by the default route:
// nothing in the root namespace has an address there, so nothing of ours
// can be reached from it by mistake and no test packet can leave.
func addUnreachableRoutes(prefixes []netip.Prefix) error {
	var added []string
	if data, err := os.ReadFile(routesFile()); err == nil {
		_ = json.Unmarshal(data, &added)
	}
	have := map[string]bool{}
	for _, a := range added {
		have[a] = true
	}
	for _, p := range prefixes {
		if have[p.String()] {
			continue
		}
		r := &netlink.Route{Dst: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}, Type: unix.RTN_UNREACHABLE}
		if err := netlink.RouteAdd(r); err != nil {
			if errors.Is(err, unix.EEXIST) {
				continue // someone else's route: not ours to remove later
			}
			return fmt.Errorf("adding an unreachable route for %s in the root network namespace: %w", p, err)
		}
		added = append(added, p.String())
		have[p.String()] = true
	}
	sort.Strings(added)
	data, _ := json.Marshal(added)
	return os.WriteFile(routesFile(), data, 0o644)
}

func removeUnreachableRoutes() error {
	data, err := os.ReadFile(routesFile())
	if err != nil {
		return nil
	}
	var added []string
	_ = json.Unmarshal(data, &added)
	var errs []error
	for _, a := range added {
		p, err := netip.ParsePrefix(a)
		if err != nil {
			continue
		}
		r := &netlink.Route{Dst: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), 32)}, Type: unix.RTN_UNREACHABLE}
		if err := netlink.RouteDel(r); err != nil && !errors.Is(err, unix.ESRCH) {
			errs = append(errs, fmt.Errorf("removing the unreachable route for %s: %w", p, err))
		}
	}
	if len(errs) == 0 {
		_ = os.Remove(routesFile())
	}
	return errors.Join(errs...)
}

// unmountUnder detaches every mount below dir, deepest first: the kubelet's
// volumes, containerd's root filesystems, shm and pod namespace mounts.
func unmountUnder(dir string) error {
	if dir == "" || dir == "/" {
		return nil
	}
	points := mountsUnder(dir)
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	var errs []error
	for _, mp := range points {
		if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("unmounting %s: %w", mp, err))
		}
	}
	return errors.Join(errs...)
}

// mountsUnder lists the mount points below dir.
func mountsUnder(dir string) []string {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	var points []string
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) > 4 {
			if mp := unescapeMount(fields[4]); strings.HasPrefix(mp, filepath.Clean(dir)+"/") {
				points = append(points, mp)
			}
		}
	}
	return points
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// sweepHost removes what dead owners left: for every slot file whose lock is
// free, its nodes' processes (killed through their cgroups), mounts and
// network namespaces; then unused underlays. Call it with the host lock held.
func sweepHost() {
	dirs, _ := filepath.Glob(filepath.Join(hostStateDir, "u-*"))
	for _, d := range dirs {
		name := strings.TrimPrefix(filepath.Base(d), "u-")
		slots, _ := filepath.Glob(filepath.Join(d, "slot-*"))
		for _, path := range slots {
			lf, ok, err := tryLock(path)
			if err != nil || !ok {
				continue // held by a live owner
			}
			n, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(path), "slot-"))
			var rec slotRecord
			if data, err := lf.read(); err == nil {
				_ = json.Unmarshal(data, &rec)
			}
			sweepSlot(name, n, rec)
			lf.unlock(true)
		}
	}
	_ = removeUnusedUnderlays()
}

// sweepSlot removes one dead cluster's real nodes.
func sweepSlot(underlay string, n int, rec slotRecord) {
	_ = removeCgroupTree(slotCgroup(underlay, n))
	if rec.Dir != "" {
		_ = unmountUnder(rec.Dir)
	}
	for _, ns := range netns.List(slotNodeNSPrefix(underlay, n)) {
		_ = netns.Delete(ns)
	}
	if netns.Exists(underlayNS(underlay)) {
		_ = bridgeAddr(underlay, slotAddr(n, 1), false)
	}
	pruneEmptyCgroups(slotCgroup(underlay, n))
}
