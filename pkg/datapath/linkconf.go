package datapath

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// LinkConf is one IPv4 setting of a link, numbered as the kernel's
// IPV4_DEVCONF_* (include/uapi/linux/ip.h); the same settings appear as
// /proc/sys/net/ipv4/conf/<link>/<name>.
type LinkConf int

// The settings a router namespace needs.
const (
	// Forwarding: packets arriving on the link may be forwarded. The
	// kernel decides by the ingress link's own flag (not by ip_forward,
	// which only copies itself to every link when written).
	Forwarding LinkConf = 1
	// RPFilter: reverse-path filtering of what arrives on the link; the
	// kernel applies the larger of the link's and "all"'s value.
	RPFilter LinkConf = 8
	// AcceptLocal: what arrives on the link may carry a local address as
	// its source; the kernel ORs the link's and "all"'s value.
	AcceptLocal LinkConf = 23
)

// name is the setting's file under /proc/sys/net/ipv4/conf/<link>/.
func (c LinkConf) name() string {
	switch c {
	case Forwarding:
		return "forwarding"
	case RPFilter:
		return "rp_filter"
	case AcceptLocal:
		return "accept_local"
	}
	return strconv.Itoa(int(c))
}

// SetLinkConf sets IPv4 settings of one link over netlink (RTM_SETLINK with
// IFLA_AF_SPEC/AF_INET/IFLA_INET_CONF), as `sysctl -w
// net.ipv4.conf.<link>.<name>=<value>` would. Over netlink it needs only
// CAP_NET_ADMIN in the link's namespace, where /proc/sys is read-only in
// an unprivileged container.
func SetLinkConf(link netlink.Link, values map[LinkConf]uint32) error {
	req := nl.NewNetlinkRequest(unix.RTM_SETLINK, unix.NLM_F_ACK)
	msg := nl.NewIfInfomsg(unix.AF_UNSPEC)
	msg.Index = int32(link.Attrs().Index)
	req.AddData(msg)
	conf := nl.NewRtAttr(unix.IFLA_INET_CONF, nil)
	for k, v := range values {
		conf.AddRtAttr(int(k), nl.Uint32Attr(v))
	}
	inet := nl.NewRtAttr(unix.AF_INET, nil)
	inet.AddChild(conf)
	spec := nl.NewRtAttr(unix.IFLA_AF_SPEC, nil)
	spec.AddChild(inet)
	req.AddData(spec)
	if _, err := req.Execute(unix.NETLINK_ROUTE, 0); err != nil {
		return fmt.Errorf("setting IPv4 settings of link %s: %w", link.Attrs().Name, err)
	}
	return nil
}

// LinkConfOf reads one IPv4 setting of a link, or of "all" (which has no
// link: the namespace-wide value the kernel combines with each link's),
// from /proc/sys, which stays readable where it is not writable.
func LinkConfOf(link string, c LinkConf) (uint32, error) {
	path := filepath.Join("/proc/sys/net/ipv4/conf", link, c.name())
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("reading %s: %w", path, err)
	}
	return uint32(v), nil
}
