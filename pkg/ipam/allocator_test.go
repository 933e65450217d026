package ipam

import (
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
)

var mp = netip.MustParsePrefix

func mustNew(t *testing.T, pools, reserved []netip.Prefix) *Allocator {
	t.Helper()
	a, err := New(pools, reserved)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestAcquireNetwork(t *testing.T) {
	// The pod CIDR every testbed cluster uses, a service CIDR and a
	// reserved range; peers arrive in this order.
	a := mustNew(t, []netip.Prefix{mp("10.0.0.0/8")}, []netip.Prefix{mp("10.244.0.0/16"), mp("10.96.0.0/12"), mp("10.0.0.0/16")})
	steps := []struct {
		want, got string
	}{
		{"10.244.0.0/16", "10.1.0.0/16"},     // overlaps the local pod CIDR: first free /16
		{"10.244.0.0/16", "10.2.0.0/16"},     // a second peer with the same CIDR
		{"192.168.5.0/24", "192.168.5.0/24"}, // overlaps nothing: kept
		{"192.168.5.0/24", "10.3.0.0/24"},    // the same again: remapped into the pool
		{"10.3.0.128/25", "10.3.1.0/25"},     // inside the /24 just given
		{"10.0.0.0/9", "no free /9"},         // no /9 is free in 10/8 any more
		{"10.3.0.0/33", "not a canonical"},
		{"10.3.0.1/24", "not a canonical"},
	}
	for _, s := range steps {
		want, _ := netip.ParsePrefix(s.want) // the zero prefix when it does not parse
		got, err := a.AcquireNetwork(want)
		if err != nil {
			if !strings.Contains(err.Error(), s.got) {
				t.Errorf("AcquireNetwork(%s): error %v, want %q", s.want, err, s.got)
			}
			continue
		}
		if got.String() != s.got {
			t.Errorf("AcquireNetwork(%s) = %s, want %s", s.want, got, s.got)
		}
	}
}

// TestReserve: a prefix reserved later (a node's network that appeared)
// is no longer kept as is nor handed out; what was allocated stays.
func TestReserve(t *testing.T) {
	a := mustNew(t, []netip.Prefix{mp("192.168.0.0/16")}, nil)
	if got, err := a.AcquireNetwork(mp("192.168.7.0/24")); err != nil || got != mp("192.168.7.0/24") {
		t.Fatalf("before: got %s, %v; want it kept", got, err)
	}
	if err := a.Reserve(mp("192.168.0.0/24"), mp("192.168.8.0/24"), mp("192.168.8.0/24")); err != nil {
		t.Fatal(err)
	}
	if got, err := a.AcquireNetwork(mp("192.168.8.0/24")); err != nil || got != mp("192.168.1.0/24") {
		t.Errorf("a reserved /24: got %s, %v; want the first free one, 192.168.1.0/24", got, err)
	}
	if got := a.Networks(); len(got) != 2 || got[1] != mp("192.168.7.0/24") {
		t.Errorf("allocated: %v, want 192.168.7.0/24 kept", got)
	}
	if err := a.Reserve(mp("fd00::/64")); err == nil {
		t.Error("Reserve took an IPv6 prefix, which the allocator does not handle")
	}
}

func TestAcquireNetworkSkipsLargeBlocks(t *testing.T) {
	// A reserved /9 at the start of the pool is skipped in one step and
	// the result stays aligned to its own size.
	a := mustNew(t, []netip.Prefix{mp("10.0.0.0/8")}, []netip.Prefix{mp("10.0.0.0/9"), mp("10.128.0.0/30")})
	got, err := a.AcquireNetwork(mp("10.0.0.0/24"))
	if err != nil || got != mp("10.128.1.0/24") {
		t.Fatalf("got %s, %v; want 10.128.1.0/24", got, err)
	}
}

func TestNewRejects(t *testing.T) {
	for _, tc := range []struct {
		pools, reserved []netip.Prefix
	}{
		{[]netip.Prefix{mp("10.0.0.1/8")}, nil},
		{nil, []netip.Prefix{mp("fd00::/64")}},
		{nil, []netip.Prefix{{}}},
	} {
		if _, err := New(tc.pools, tc.reserved); err == nil {
			t.Errorf("New(%v, %v) accepted", tc.pools, tc.reserved)
		}
	}
}

func TestRestore(t *testing.T) {
	a := mustNew(t, nil, []netip.Prefix{mp("10.244.0.0/16")})
	if err := a.Restore(mp("10.1.0.0/16")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []netip.Prefix{mp("10.1.2.0/24"), mp("10.244.0.0/24"), mp("10.0.0.0/8"), mp("10.1.2.3/16")} {
		if err := a.Restore(p); err == nil {
			t.Errorf("Restore(%s) accepted an overlap or a non-canonical prefix", p)
		}
	}
	// After a restart the next allocation goes around what was restored.
	if got, err := a.AcquireNetwork(mp("10.244.0.0/16")); err != nil || got != mp("10.0.0.0/16") {
		t.Errorf("got %s, %v; want 10.0.0.0/16", got, err)
	}
	if got, err := a.AcquireNetwork(mp("10.244.0.0/16")); err != nil || got != mp("10.2.0.0/16") {
		t.Errorf("got %s, %v; want 10.2.0.0/16", got, err)
	}
	if want := []netip.Prefix{mp("10.0.0.0/16"), mp("10.1.0.0/16"), mp("10.2.0.0/16")}; !equal(a.Networks(), want) {
		t.Errorf("Networks() = %v, want %v", a.Networks(), want)
	}
	a.ReleaseNetwork(mp("10.1.0.0/16"))
	if got, err := a.AcquireNetwork(mp("10.244.0.0/16")); err != nil || got != mp("10.1.0.0/16") {
		t.Errorf("after release got %s, %v; want 10.1.0.0/16 again", got, err)
	}
}

func TestIPs(t *testing.T) {
	a := mustNew(t, nil, nil)
	n := mp("192.168.7.0/30")
	if _, err := a.AcquireIP(n, 0); err == nil {
		t.Fatal("an address of a network never allocated was handed out")
	}
	if _, err := a.AcquireNetwork(n); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 3 {
		ip, err := a.AcquireIP(n, 1)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ip.String())
	}
	if strings.Join(got, " ") != "192.168.7.1 192.168.7.2 192.168.7.3" {
		t.Errorf("got %v, want .1 .2 .3 (.0 pre-allocated)", got)
	}
	if _, err := a.AcquireIP(n, 1); err == nil || !strings.Contains(err.Error(), "no free address") {
		t.Errorf("a full network: %v", err)
	}
	a.ReleaseIP(n, netip.MustParseAddr("192.168.7.2"))
	if ip, err := a.AcquireIP(n, 1); err != nil || ip.String() != "192.168.7.2" {
		t.Errorf("after release got %s, %v", ip, err)
	}
	for _, ip := range []string{"192.168.7.1", "192.168.8.1"} {
		if err := a.RestoreIP(n, netip.MustParseAddr(ip)); err == nil {
			t.Errorf("RestoreIP(%s) accepted a taken or outside address", ip)
		}
	}
	a.ReleaseIP(n, netip.MustParseAddr("192.168.7.3"))
	if err := a.RestoreIP(n, netip.MustParseAddr("192.168.7.3")); err != nil {
		t.Error(err)
	}
}

// TestAllocatorProperties drives the allocator with random acquisitions
// and releases and checks after each step: no two live prefixes overlap
// each other or a reserved one, each has the size asked, and a request
// fails only when no prefix of that size is free.
func TestAllocatorProperties(t *testing.T) {
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		pool := mp("10.0.0.0/16")
		reserved := []netip.Prefix{mp("10.0.3.0/24"), mp("10.0.128.0/20")}
		a := mustNew(t, []netip.Prefix{pool}, reserved)
		live := map[netip.Prefix]bool{}
		for step := range 400 {
			if len(live) > 0 && r.IntN(3) == 0 {
				for p := range live {
					a.ReleaseNetwork(p)
					delete(live, p)
					break
				}
				continue
			}
			bits := 18 + r.IntN(12)
			want := netip.PrefixFrom(addr(u32(pool.Addr())|r.Uint32()&^mask(16)), bits).Masked()
			got, err := a.AcquireNetwork(want)
			if err != nil {
				if free := anyFree(pool, bits, reserved, live); free.IsValid() {
					t.Fatalf("seed %d step %d: /%d refused (%v) while %s is free", seed, step, bits, err, free)
				}
				continue
			}
			if got.Bits() != bits {
				t.Fatalf("seed %d step %d: asked /%d, got %s", seed, step, bits, got)
			}
			for _, other := range append(reserved, keys(live)...) {
				if got.Overlaps(other) {
					t.Fatalf("seed %d step %d: %s overlaps %s", seed, step, got, other)
				}
			}
			live[got] = true
		}
		if !equal(a.Networks(), sorted(keys(live))) {
			t.Fatalf("seed %d: Networks() = %v, want %v", seed, a.Networks(), sorted(keys(live)))
		}
	}
}

// anyFree is the slow reference: the first prefix of size bits in pool
// that overlaps nothing.
func anyFree(pool netip.Prefix, bits int, reserved []netip.Prefix, live map[netip.Prefix]bool) netip.Prefix {
	size := uint64(1) << (32 - bits)
	for c := uint64(u32(pool.Addr())); c+size-1 <= uint64(last(pool)); c += size {
		p := netip.PrefixFrom(addr(uint32(c)), bits)
		free := true
		for _, o := range append(reserved, keys(live)...) {
			if o.Overlaps(p) {
				free = false
				break
			}
		}
		if free {
			return p
		}
	}
	return netip.Prefix{}
}

func keys(m map[netip.Prefix]bool) []netip.Prefix {
	var out []netip.Prefix
	for p := range m {
		out = append(out, p)
	}
	return out
}

func sorted(ps []netip.Prefix) []netip.Prefix {
	out := append([]netip.Prefix(nil), ps...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j].Addr().Less(out[i].Addr()) {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func equal(a, b []netip.Prefix) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// FuzzAllocator feeds arbitrary prefixes and checks that whatever is
// handed out overlaps nothing live or reserved and keeps the size.
func FuzzAllocator(f *testing.F) {
	f.Add([]byte{10, 244, 0, 0, 16, 10, 244, 0, 0, 16, 192, 168, 1, 0, 24})
	f.Fuzz(func(t *testing.T, data []byte) {
		reserved := []netip.Prefix{mp("10.244.0.0/16"), mp("10.96.0.0/12")}
		a := mustNew(t, []netip.Prefix{mp("10.0.0.0/8")}, reserved)
		var live []netip.Prefix
		for len(data) >= 5 {
			want := netip.PrefixFrom(netip.AddrFrom4([4]byte(data[:4])), int(data[4]%33)).Masked()
			data = data[5:]
			got, err := a.AcquireNetwork(want)
			if err != nil {
				continue
			}
			if got.Bits() != want.Bits() {
				t.Fatalf("asked %s, got %s", want, got)
			}
			for _, o := range append(reserved, live...) {
				if got.Overlaps(o) {
					t.Fatalf("%s overlaps %s", got, o)
				}
			}
			live = append(live, got)
		}
	})
}
