package datapath

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"

	"github.com/vishvananda/netlink"
)

// VXLAN is one point-to-point overlay link without an address: traffic is
// routed to Hop, a next hop on the link whose MAC (HopMAC) is written as a
// permanent neighbour, so nothing on the link ever needs ARP.
type VXLAN struct {
	Name   string
	VNI    uint32
	Remote netip.Addr
	Port   int
	MTU    int
	MAC    net.HardwareAddr
	Hop    netip.Addr
	HopMAC net.HardwareAddr
}

// EnsureVXLAN creates the link or brings an existing one in line. A link
// whose VNI or port changed is recreated (the kernel cannot change them);
// a new remote is set in place, so the link and its routes stay.
func EnsureVXLAN(v VXLAN) (netlink.Link, error) {
	want := &netlink.Vxlan{
		LinkAttrs: netlink.LinkAttrs{Name: v.Name, MTU: v.MTU, HardwareAddr: v.MAC},
		VxlanId:   int(v.VNI), Group: v.Remote.AsSlice(), Port: v.Port, Learning: false,
	}
	cur, err := netlink.LinkByName(v.Name)
	switch {
	case err == nil:
		// A changed far end (a gateway pod replaced, with a new address)
		// means a new link: the kernel's support for changing a VXLAN's
		// remote in place varies, and the routes through the link are
		// synced again right after anyway.
		x, ok := cur.(*netlink.Vxlan)
		if !ok || x.VxlanId != int(v.VNI) || x.Port != v.Port || !x.Group.Equal(v.Remote.AsSlice()) {
			if err := netlink.LinkDel(cur); err != nil {
				return nil, fmt.Errorf("replacing link %s: %w", v.Name, err)
			}
			cur = nil
		}
	case errors.As(err, &netlink.LinkNotFoundError{}):
		cur = nil
	default:
		return nil, err
	}
	if cur == nil {
		if err := netlink.LinkAdd(want); err != nil {
			return nil, fmt.Errorf("creating VXLAN link %s (VNI %d): %w", v.Name, v.VNI, err)
		}
	}
	link, err := netlink.LinkByName(v.Name)
	if err != nil {
		return nil, err
	}
	if link.Attrs().MTU != v.MTU {
		if err := netlink.LinkSetMTU(link, v.MTU); err != nil {
			return nil, err
		}
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return nil, err
	}
	if err := netlink.NeighSet(&netlink.Neigh{LinkIndex: link.Attrs().Index, Family: netlink.FAMILY_V4,
		State: netlink.NUD_PERMANENT, IP: v.Hop.AsSlice(), HardwareAddr: v.HopMAC}); err != nil {
		return nil, fmt.Errorf("next hop on link %s: %w", v.Name, err)
	}
	return link, nil
}

// PruneLinks deletes the links whose name starts with prefix and is not in
// keep: those of gateways or nodes that are gone.
func PruneLinks(prefix string, keep map[string]bool) error {
	links, err := netlink.LinkList()
	if err != nil {
		return err
	}
	var errs []error
	for _, l := range links {
		n := l.Attrs().Name
		if strings.HasPrefix(n, prefix) && !keep[n] {
			if err := netlink.LinkDel(l); err != nil {
				errs = append(errs, fmt.Errorf("deleting link %s: %w", n, err))
			}
		}
	}
	return errors.Join(errs...)
}
