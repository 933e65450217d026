package ipam

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// RemapIP translates ip from prefix from into prefix to: the network bits
// are to's, the host bits stay. Both prefixes must be IPv4 of the same
// size, and ip inside from.
func RemapIP(ip netip.Addr, from, to netip.Prefix) (netip.Addr, error) {
	if err := samePrefixSize(from, to); err != nil {
		return netip.Addr{}, err
	}
	if !ip.Is4() || !from.Contains(ip) {
		return netip.Addr{}, fmt.Errorf("%s is not in %s", ip, from)
	}
	host := u32(ip) &^ mask(from.Bits())
	return addr(u32(to.Masked().Addr()) | host), nil
}

func samePrefixSize(a, b netip.Prefix) error {
	if !a.Addr().Is4() || !b.Addr().Is4() {
		return fmt.Errorf("%s and %s: only IPv4 prefixes are handled", a, b)
	}
	if a.Bits() != b.Bits() {
		return fmt.Errorf("%s and %s have different sizes", a, b)
	}
	return nil
}

func u32(a netip.Addr) uint32 {
	b := a.As4()
	return binary.BigEndian.Uint32(b[:])
}

func addr(v uint32) netip.Addr {
	var b [4]byte
	binary.BigEndian.PutUint32(b[:], v)
	return netip.AddrFrom4(b)
}

func mask(bits int) uint32 {
	if bits == 0 {
		return 0
	}
	return ^uint32(0) << (32 - bits)
}

// last is the last address of p, as a number.
func last(p netip.Prefix) uint32 { return u32(p.Masked().Addr()) | ^mask(p.Bits()) }
