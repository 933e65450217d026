package ipam

import (
	"net/netip"
	"testing"
)

func TestRemapIP(t *testing.T) {
	for _, tc := range []struct {
		ip, from, to, want string
	}{
		{"10.244.1.7", "10.244.0.0/16", "10.71.0.0/16", "10.71.1.7"},
		{"10.244.255.255", "10.244.0.0/16", "10.71.0.0/16", "10.71.255.255"},
		{"192.168.5.9", "192.168.5.0/24", "10.3.0.0/24", "10.3.0.9"},
		{"1.2.3.4", "1.2.3.4/32", "9.9.9.9/32", "9.9.9.9"},
		{"1.2.3.4", "0.0.0.0/0", "0.0.0.0/0", "1.2.3.4"},
		{"10.245.0.1", "10.244.0.0/16", "10.71.0.0/16", "error"},
		{"10.244.0.1", "10.244.0.0/16", "10.71.0.0/24", "error"},
		{"::1", "10.244.0.0/16", "10.71.0.0/16", "error"},
	} {
		got, err := RemapIP(netip.MustParseAddr(tc.ip), netip.MustParsePrefix(tc.from), netip.MustParsePrefix(tc.to))
		if tc.want == "error" {
			if err == nil {
				t.Errorf("RemapIP(%s, %s, %s) = %s, want an error", tc.ip, tc.from, tc.to, got)
			}
			continue
		}
		if err != nil || got.String() != tc.want {
			t.Errorf("RemapIP(%s, %s, %s) = %s, %v; want %s", tc.ip, tc.from, tc.to, got, err, tc.want)
		}
	}
}

// FuzzRemap checks that remapping keeps the host bits, lands inside the
// target and comes back unchanged.
func FuzzRemap(f *testing.F) {
	f.Add(uint32(0x0af40107), uint32(0x0a470000), 16)
	f.Fuzz(func(t *testing.T, ip, to uint32, bits int) {
		bits = ((bits % 33) + 33) % 33
		a := addr(ip)
		from := netip.PrefixFrom(a, bits).Masked()
		dst := netip.PrefixFrom(addr(to), bits).Masked()
		got, err := RemapIP(a, from, dst)
		if err != nil {
			t.Fatal(err)
		}
		if !dst.Contains(got) || u32(got)&^mask(bits) != ip&^mask(bits) {
			t.Fatalf("RemapIP(%s, %s, %s) = %s", a, from, dst, got)
		}
		back, err := RemapIP(got, dst, from)
		if err != nil || back != a {
			t.Fatalf("back: %s, %v; want %s", back, err, a)
		}
	})
}
