package ipam

import (
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/liqo-go/liqo/pkg/kit"
)

// Options are this cluster's own networks.
type Options struct {
	// PodCIDR is the network the cluster's pods take their addresses from.
	// When unset, Configurations report that the local CIDRs are unknown.
	PodCIDR netip.Prefix
	// ServiceCIDR is the network of the cluster's ClusterIPs.
	ServiceCIDR netip.Prefix
	// ExternalCIDR is where local addresses that are not pods' (the API
	// server, nodes) get their twins, for peers to reach them.
	ExternalCIDR netip.Prefix
	// Reserved are networks never handed to a peer (the nodes' network,
	// anything else the cluster routes).
	Reserved []netip.Prefix
	// Pools are where remapped networks are taken from (default: the
	// private ranges).
	Pools []netip.Prefix
	// Namespace holds the Networks of the local CIDRs.
	Namespace string
	// Owner owns the Networks of the local CIDRs and the API server's IP.
	Owner kit.InstallOwner
}

// DefaultExternalCIDR is the external CIDR when none is given, as in the
// reference system.
var DefaultExternalCIDR = netip.MustParsePrefix("10.70.0.0/16")

// AddFlags binds o to the command-line flags users know from the
// reference system's install options.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.Var(prefixValue{&o.PodCIDR}, "pod-cidr", "network of this cluster's pods, such as 10.244.0.0/16 (needed by the network fabric)")
	fs.Var(prefixValue{&o.ServiceCIDR}, "service-cidr", "network of this cluster's Services, such as 10.96.0.0/12")
	fs.Var(prefixValue{&o.ExternalCIDR}, "external-cidr", "network where local addresses that are not pods' get the twins peers reach them at")
	fs.Var(prefixesValue{&o.Reserved}, "reserved-subnets", "comma-separated networks never given to a peer's CIDR (the nodes' network, anything routed locally)")
}

// Validate tells what is wrong with o.
func (o Options) Validate() error {
	named := []struct {
		flag string
		p    netip.Prefix
	}{{"--pod-cidr", o.PodCIDR}, {"--service-cidr", o.ServiceCIDR}, {"--external-cidr", o.ExternalCIDR}}
	for _, r := range o.Reserved {
		named = append(named, struct {
			flag string
			p    netip.Prefix
		}{"--reserved-subnets", r})
	}
	for i, a := range named {
		if !a.p.IsValid() {
			continue
		}
		if err := checkPrefix(a.p); err != nil {
			return fmt.Errorf("%s: %w", a.flag, err)
		}
		for _, b := range named[:i] {
			if b.p.IsValid() && a.p.Overlaps(b.p) {
				return fmt.Errorf("%s %s overlaps %s %s", a.flag, a.p, b.flag, b.p)
			}
		}
	}
	if !o.ExternalCIDR.IsValid() {
		return fmt.Errorf("--external-cidr is required")
	}
	return nil
}

// LocalNetworks are this cluster's own networks: the pod, service and
// external CIDRs and the reserved subnets.
func (o Options) LocalNetworks() []netip.Prefix {
	return slices.Collect(maps.Values(o.local()))
}

// local lists this cluster's networks with the names of their Network
// objects.
func (o Options) local() map[string]netip.Prefix {
	out := map[string]netip.Prefix{"external-cidr": o.ExternalCIDR}
	if o.PodCIDR.IsValid() {
		out["pod-cidr"] = o.PodCIDR
	}
	if o.ServiceCIDR.IsValid() {
		out["service-cidr"] = o.ServiceCIDR
	}
	for i, r := range o.Reserved {
		out[fmt.Sprintf("reserved-subnet-%d", i)] = r
	}
	return out
}

func checkPrefix(p netip.Prefix) error {
	if !p.Addr().Is4() {
		return fmt.Errorf("%s: only IPv4 networks are handled", p)
	}
	if p.Masked() != p {
		return fmt.Errorf("%s has host bits set (did you mean %s?)", p, p.Masked())
	}
	return nil
}

type prefixValue struct{ p *netip.Prefix }

func (v prefixValue) String() string {
	if v.p == nil || !v.p.IsValid() {
		return ""
	}
	return v.p.String()
}

func (v prefixValue) Set(s string) error {
	if s == "" {
		*v.p = netip.Prefix{}
		return nil
	}
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("%q is not a network such as 10.244.0.0/16", s)
	}
	*v.p = p
	return nil
}

func (prefixValue) Type() string { return "cidr" }

type prefixesValue struct{ ps *[]netip.Prefix }

func (v prefixesValue) String() string {
	var parts []string
	for _, p := range *v.ps {
		parts = append(parts, p.String())
	}
	return strings.Join(parts, ",")
}

func (v prefixesValue) Set(s string) error {
	*v.ps = nil
	for part := range strings.SplitSeq(s, ",") {
		if strings.TrimSpace(part) == "" {
			continue
		}
		var p netip.Prefix
		if err := (prefixValue{&p}).Set(part); err != nil {
			return err
		}
		*v.ps = append(*v.ps, p)
	}
	return nil
}

func (prefixesValue) Type() string { return "cidrs" }
