package ipam

import (
	"fmt"
	"net/netip"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"

	netv1beta1 "github.com/liqo-go/liqo/apis/networking/v1beta1"
)

// Mapping translates a peer's addresses, as the peer uses them, into this
// cluster's view of them: each of the peer's networks is paired with the
// network the IPAM remapped it to (a Configuration's spec.remote and
// status.remote, index by index).
type Mapping struct {
	pairs [][2]netip.Prefix
}

// NewMapping pairs from[i] with to[i]; both lists hold CIDRs of the same
// sizes, index by index.
func NewMapping(from, to []string) (Mapping, error) {
	if len(from) != len(to) {
		return Mapping{}, fmt.Errorf("%d networks remapped to %d", len(from), len(to))
	}
	var m Mapping
	for i := range from {
		f, err := netip.ParsePrefix(from[i])
		if err != nil {
			return Mapping{}, err
		}
		t, err := netip.ParsePrefix(to[i])
		if err != nil {
			return Mapping{}, err
		}
		if err := samePrefixSize(f, t); err != nil {
			return Mapping{}, err
		}
		m.pairs = append(m.pairs, [2]netip.Prefix{f.Masked(), t.Masked()})
	}
	return m, nil
}

// Translate returns this cluster's address of the peer's ip, and false
// when ip is in none of the peer's networks.
func (m Mapping) Translate(ip string) (string, bool) {
	a, err := netip.ParseAddr(ip)
	if err != nil {
		return "", false
	}
	for _, p := range m.pairs {
		if p[0].Contains(a) {
			out, err := RemapIP(a, p[0], p[1])
			if err != nil {
				return "", false
			}
			return out.String(), true
		}
	}
	return "", false
}

// RemoteMapping is the Mapping of a peer's Configuration: the peer's
// networks as it announced them (spec.remote) paired with what this
// cluster's IPAM remapped them to (status.remote). ok is false while the
// Configuration is not configured: no network fabric with that peer yet,
// and nothing to translate.
func RemoteMapping(cfg *netv1beta1.Configuration) (m Mapping, ok bool, err error) {
	if cfg.Status.Remote == nil || !meta.IsStatusConditionTrue(cfg.Status.Conditions, netv1beta1.NetworkCIDRsConfiguredCondition) {
		return Mapping{}, false, nil
	}
	strs := func(cs ...[]netv1beta1.CIDR) []string {
		var out []string
		for _, c := range slices.Concat(cs...) {
			out = append(out, string(c))
		}
		return out
	}
	m, err = NewMapping(strs(cfg.Spec.Remote.CIDR.Pod, cfg.Spec.Remote.CIDR.External),
		strs(cfg.Status.Remote.CIDR.Pod, cfg.Status.Remote.CIDR.External))
	return m, err == nil, err
}
