package ipam

import (
	"fmt"
	"net/netip"
	"slices"
	"sync"
)

// DefaultPools are where remapped prefixes are taken from: the private
// ranges.
var DefaultPools = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
}

// Allocator hands out prefixes that overlap neither each other nor the
// reserved ones, and addresses inside them. It is safe for concurrent use.
type Allocator struct {
	mu       sync.Mutex
	pools    []netip.Prefix
	reserved []netip.Prefix
	nets     map[netip.Prefix]map[netip.Addr]bool
}

// New returns an allocator over pools (DefaultPools when empty) that never
// hands out anything overlapping reserved.
func New(pools, reserved []netip.Prefix) (*Allocator, error) {
	if len(pools) == 0 {
		pools = DefaultPools
	}
	for _, p := range slices.Concat(pools, reserved) {
		if !p.IsValid() || !p.Addr().Is4() || p.Masked() != p {
			return nil, fmt.Errorf("%s is not a canonical IPv4 prefix", p)
		}
	}
	return &Allocator{pools: slices.Clone(pools), reserved: slices.Clone(reserved), nets: map[netip.Prefix]map[netip.Addr]bool{}}, nil
}

// Reserve adds ps to the prefixes never handed out, from now on: what is
// allocated already stays (its owner is told apart, by comparing it with
// the cluster's networks). Prefixes reserved already are skipped.
func (a *Allocator) Reserve(ps ...netip.Prefix) error {
	for _, p := range ps {
		if !p.IsValid() || !p.Addr().Is4() || p.Masked() != p {
			return fmt.Errorf("%s is not a canonical IPv4 prefix", p)
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, p := range ps {
		if !slices.Contains(a.reserved, p) {
			a.reserved = append(a.reserved, p)
		}
	}
	return nil
}

// taken returns a reserved or allocated prefix overlapping p.
func (a *Allocator) taken(p netip.Prefix) (netip.Prefix, bool) {
	for _, r := range a.reserved {
		if r.Overlaps(p) {
			return r, true
		}
	}
	for n := range a.nets {
		if n.Overlaps(p) {
			return n, true
		}
	}
	return netip.Prefix{}, false
}

// AcquireNetwork allocates want itself when it overlaps nothing reserved or
// allocated, else the first free prefix of the same size in the pools.
func (a *Allocator) AcquireNetwork(want netip.Prefix) (netip.Prefix, error) {
	if !want.IsValid() || !want.Addr().Is4() || want.Masked() != want {
		return netip.Prefix{}, fmt.Errorf("%s is not a canonical IPv4 prefix", want)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, busy := a.taken(want); !busy {
		a.nets[want] = map[netip.Addr]bool{}
		return want, nil
	}
	for _, pool := range a.pools {
		if pool.Bits() > want.Bits() {
			continue // the pool is smaller than what is asked
		}
		size := uint64(1) << (32 - want.Bits())
		for cand := uint64(u32(pool.Addr())); cand+size-1 <= uint64(last(pool)); {
			p := netip.PrefixFrom(addr(uint32(cand)), want.Bits())
			busy, ok := a.taken(p)
			if !ok {
				a.nets[p] = map[netip.Addr]bool{}
				return p, nil
			}
			// Skip past the whole block in the way, aligned to the size.
			next := uint64(last(busy)) + 1
			next = (next + size - 1) / size * size
			if next <= cand {
				next = cand + size
			}
			cand = next
		}
	}
	return netip.Prefix{}, fmt.Errorf("no free /%d left for %s in %v", want.Bits(), want, a.pools)
}

// Restore registers p, allocated before a restart; it fails if p overlaps
// something reserved or allocated.
func (a *Allocator) Restore(p netip.Prefix) error {
	if !p.IsValid() || !p.Addr().Is4() || p.Masked() != p {
		return fmt.Errorf("%s is not a canonical IPv4 prefix", p)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if busy, ok := a.taken(p); ok {
		return fmt.Errorf("%s overlaps %s", p, busy)
	}
	a.nets[p] = map[netip.Addr]bool{}
	return nil
}

// ReleaseNetwork frees p and its addresses.
func (a *Allocator) ReleaseNetwork(p netip.Prefix) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.nets, p)
}

// Networks are the allocated prefixes, sorted.
func (a *Allocator) Networks() []netip.Prefix {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []netip.Prefix
	for p := range a.nets {
		out = append(out, p)
	}
	slices.SortFunc(out, func(x, y netip.Prefix) int { return x.Addr().Compare(y.Addr()) })
	return out
}

// AcquireIP allocates the first free address of network past its first
// preAllocated ones (kept for the cluster's own use).
func (a *Allocator) AcquireIP(network netip.Prefix, preAllocated int) (netip.Addr, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	ips, ok := a.nets[network]
	if !ok {
		return netip.Addr{}, fmt.Errorf("network %s is not allocated", network)
	}
	first, end := uint64(u32(network.Addr()))+uint64(max(preAllocated, 0)), uint64(last(network))
	for v := first; v <= end; v++ {
		ip := addr(uint32(v))
		if !ips[ip] {
			ips[ip] = true
			return ip, nil
		}
	}
	return netip.Addr{}, fmt.Errorf("network %s has no free address left", network)
}

// RestoreIP registers ip in network, allocated before a restart.
func (a *Allocator) RestoreIP(network netip.Prefix, ip netip.Addr) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	ips, ok := a.nets[network]
	switch {
	case !ok:
		return fmt.Errorf("network %s is not allocated", network)
	case !network.Contains(ip):
		return fmt.Errorf("%s is not in %s", ip, network)
	case ips[ip]:
		return fmt.Errorf("%s is already allocated", ip)
	}
	ips[ip] = true
	return nil
}

// ReleaseIP frees ip in network.
func (a *Allocator) ReleaseIP(network netip.Prefix, ip netip.Addr) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.nets[network], ip)
}
