package ipam

import (
	"net/netip"
	"strings"
	"testing"
)

func TestParsePeerCIDR(t *testing.T) {
	for _, tc := range []struct {
		in   string
		says string // "" when accepted
	}{
		{"10.244.0.0/16", ""},
		{"10.0.0.0/8", ""},
		{"172.16.5.0/24", ""},
		{"192.168.1.7/32", ""},
		{"100.64.0.0/10", ""},
		{"100.96.0.0/11", ""},
		{"fd00:10:244::/56", ""},
		{"fd12:3456:789a::/48", ""},
		// Holding a metadata address: accepted here, remapped by the IPAM.
		{"100.100.100.200/32", ""},
		{"fd00:ec2::/64", ""},
		// The attack of issue 30 and its relatives.
		{"0.0.0.0/0", "wider than /8"},
		{"0.0.0.0/1", "wider than /8"},
		{"128.0.0.0/1", "wider than /8"},
		{"169.254.169.254/32", "metadata"},
		{"169.254.0.0/16", "link-local"},
		{"127.0.0.0/8", "loopback"},
		{"127.0.0.1/32", "loopback"},
		{"0.0.0.0/8", `"this network"`},
		{"224.0.0.0/24", "multicast"},
		{"255.255.255.255/32", "broadcast"},
		{"fe80::/64", "link-local"},
		{"::1/128", "loopback"},
		{"ff02::/64", "multicast"},
		// Too wide, though private or partly so.
		{"10.0.0.0/7", "wider than /8"},
		{"fc00::/7", "wider than /48"},
		{"fd00::/16", "wider than /48"},
		// Public.
		{"8.8.8.0/24", "not inside a private range"},
		{"1.1.1.1/32", "not inside a private range"},
		{"172.32.0.0/16", "not inside a private range"},
		{"100.128.0.0/16", "not inside a private range"},
		{"11.0.0.0/8", "not inside a private range"},
		{"2001:db8::/48", "not inside a private range"},
		{"::ffff:10.0.0.0/104", "IPv4-mapped"},
		// Malformed.
		{"10.244.0.1/16", "host bits"},
		{"10.244.0.0", "not a network"},
		{"10.0.0.0/8;reboot", "not a network"},
		{"", "not a network"},
		{"fe80::%eth0/64", "not a network"},
	} {
		p, err := ParsePeerCIDR(tc.in)
		switch {
		case tc.says == "" && err != nil:
			t.Errorf("ParsePeerCIDR(%q): %v, want it accepted", tc.in, err)
		case tc.says == "" && p.String() != tc.in:
			t.Errorf("ParsePeerCIDR(%q) = %s", tc.in, p)
		case tc.says != "" && err == nil:
			t.Errorf("ParsePeerCIDR(%q) = %s, want it refused saying %q", tc.in, p, tc.says)
		case tc.says != "" && !strings.Contains(err.Error(), tc.says):
			t.Errorf("ParsePeerCIDR(%q): %q, want it to say %q", tc.in, err, tc.says)
		}
	}
}

func TestNodeNetwork(t *testing.T) {
	for in, want := range map[string]string{
		"172.31.4.10":          "172.31.4.0/24",
		"127.0.0.1":            "127.0.0.0/24",
		"::ffff:192.168.1.5":   "192.168.1.0/24",
		"fd00:1:2:3:4:5:6:7":   "fd00:1:2:3::/64",
		"fe80::1%eth0":         "fe80::/64",
		"10.0.0.255":           "10.0.0.0/24",
		"2001:db8:0:1::abcd:1": "2001:db8:0:1::/64",
	} {
		if got := NodeNetwork(netip.MustParseAddr(in)); got.String() != want {
			t.Errorf("NodeNetwork(%s) = %s, want %s", in, got, want)
		}
	}
}

// FuzzParsePeerCIDR feeds the peer-input validator any string: it never
// panics, and what it accepts is a canonical prefix no wider than the
// bound, inside a private range, clear of every special-purpose one, and
// the same network the peer wrote.
func FuzzParsePeerCIDR(f *testing.F) {
	for _, s := range []string{"10.244.0.0/16", "169.254.169.254/32", "0.0.0.0/1", "100.64.0.0/10", "fd00::/48",
		"fd00:ec2::/64", "::ffff:10.0.0.0/104", "10.0.0.0/7", "fe80::%eth0/64", "192.168.0.1/24", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePeerCIDR(s)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("ParsePeerCIDR(%q): an empty error", s)
			}
			return
		}
		if !p.IsValid() || p.Masked() != p || p.Addr().Zone() != "" || p.Addr().Is4In6() {
			t.Fatalf("ParsePeerCIDR(%q) = %s, not a canonical prefix", s, p)
		}
		if q, err := netip.ParsePrefix(s); err != nil || q != p {
			t.Fatalf("ParsePeerCIDR(%q) = %s, not what was written", s, p)
		}
		if (p.Addr().Is4() && p.Bits() < MinPeerPrefixBits4) || (p.Addr().Is6() && p.Bits() < MinPeerPrefixBits6) {
			t.Fatalf("ParsePeerCIDR(%q) = %s, wider than the bound", s, p)
		}
		inside := false
		for _, r := range privateRanges {
			inside = inside || (r.p.Bits() <= p.Bits() && r.p.Overlaps(p))
		}
		if !inside {
			t.Fatalf("ParsePeerCIDR(%q) = %s, outside the private ranges", s, p)
		}
		for _, d := range deniedRanges {
			if d.p.Overlaps(p) {
				t.Fatalf("ParsePeerCIDR(%q) = %s, which overlaps %s (%s)", s, p, d.p, d.name)
			}
		}
	})
}
