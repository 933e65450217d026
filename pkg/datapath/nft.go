package datapath

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"

	"github.com/google/nftables"
	"github.com/google/nftables/expr"
	"golang.org/x/sys/unix"
)

// Rule is one nftables rule as a list of expressions.
type Rule []expr.Any

// Chain is a chain and its rules: a base chain on Hook, or, with Hook
// nil, a regular chain that other chains' rules go to (Goto).
type Chain struct {
	Name     string
	Type     nftables.ChainType
	Hook     *nftables.ChainHook
	Priority *nftables.ChainPriority
	Rules    []Rule
}

// Count is what a named counter has seen.
type Count struct {
	Packets, Bytes uint64
}

// ReplaceTable makes the IPv4 table name hold exactly chains and the named
// counters, in one netlink batch: the kernel applies it whole or not at
// all, so packets never see a half-built table. Connections keep their NAT
// bindings (conntrack holds them), so a replace does not cut them. A
// counter that already exists keeps its value (read just before the
// batch: what it counts in between is lost), so a replace does not hide
// what it counted.
func ReplaceTable(name string, chains []Chain, counters ...string) error {
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	t := &nftables.Table{Name: name, Family: nftables.TableFamilyIPv4}
	exists, err := tableExists(c, name)
	if err != nil {
		return err
	}
	old := map[string]Count{}
	if exists {
		if old, err = counts(c, t); err != nil {
			return err
		}
		c.DelTable(t)
	}
	c.AddTable(t)
	for _, n := range counters {
		c.AddObj(&nftables.CounterObj{Table: t, Name: n, Packets: old[n].Packets, Bytes: old[n].Bytes})
	}
	// Every chain before any rule: a rule may go to a chain listed after
	// its own.
	added := make([]*nftables.Chain, len(chains))
	for i, ch := range chains {
		added[i] = c.AddChain(&nftables.Chain{Name: ch.Name, Table: t, Type: ch.Type, Hooknum: ch.Hook, Priority: ch.Priority})
	}
	for i, ch := range chains {
		for _, r := range ch.Rules {
			c.AddRule(&nftables.Rule{Table: t, Chain: added[i], Exprs: r})
		}
	}
	if err := c.Flush(); err != nil {
		return fmt.Errorf("writing nftables table %s: %w", name, err)
	}
	return nil
}

// Counters returns the named counters of the IPv4 table name; none if
// the table does not exist.
func Counters(name string) (map[string]Count, error) {
	c, err := nftables.New()
	if err != nil {
		return nil, fmt.Errorf("nftables: %w", err)
	}
	exists, err := tableExists(c, name)
	if err != nil || !exists {
		return map[string]Count{}, err
	}
	return counts(c, &nftables.Table{Name: name, Family: nftables.TableFamilyIPv4})
}

func counts(c *nftables.Conn, t *nftables.Table) (map[string]Count, error) {
	objs, err := c.GetObjects(t)
	if err != nil {
		return nil, fmt.Errorf("reading the counters of nftables table %s: %w", t.Name, err)
	}
	out := map[string]Count{}
	for _, o := range objs {
		if co, ok := o.(*nftables.CounterObj); ok {
			out[co.Name] = Count{Packets: co.Packets, Bytes: co.Bytes}
		}
	}
	return out, nil
}

// DeleteTable removes the IPv4 table name, if it exists.
func DeleteTable(name string) error {
	c, err := nftables.New()
	if err != nil {
		return fmt.Errorf("nftables: %w", err)
	}
	exists, err := tableExists(c, name)
	if err != nil || !exists {
		return err
	}
	c.DelTable(&nftables.Table{Name: name, Family: nftables.TableFamilyIPv4})
	return c.Flush()
}

// TableExists tells whether the IPv4 table name exists.
func TableExists(name string) (bool, error) {
	c, err := nftables.New()
	if err != nil {
		return false, err
	}
	return tableExists(c, name)
}

func tableExists(c *nftables.Conn, name string) (bool, error) {
	tables, err := c.ListTablesOfFamily(nftables.TableFamilyIPv4)
	if err != nil {
		return false, fmt.Errorf("listing nftables tables: %w", err)
	}
	for _, t := range tables {
		if t.Name == name {
			return true, nil
		}
	}
	return false, nil
}

// The building blocks of rules. Each match loads into register 1 and
// compares; NAT targets use registers 1 and 2.

// IfName matches the input (in) or output interface name.
func IfName(in bool, name string, equal bool) Rule {
	key := expr.MetaKeyOIFNAME
	if in {
		key = expr.MetaKeyIIFNAME
	}
	op := expr.CmpOpNeq
	if equal {
		op = expr.CmpOpEq
	}
	b := make([]byte, unix.IFNAMSIZ)
	copy(b, name)
	return Rule{&expr.Meta{Key: key, Register: 1}, &expr.Cmp{Op: op, Register: 1, Data: b}}
}

// Addr matches the source (src) or destination address against p.
func Addr(src bool, p netip.Prefix) Rule {
	off := uint32(16)
	if src {
		off = 12
	}
	mask := prefixMask(p.Bits())
	net4 := p.Masked().Addr().As4()
	return Rule{
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseNetworkHeader, Offset: off, Len: 4},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: mask, Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: net4[:]},
	}
}

// PrefixNAT rewrites the source (snat) or destination address into to,
// keeping the host bits: NETMAP, one-to-one between two prefixes of the
// same size.
func PrefixNAT(snat bool, to netip.Prefix) Rule {
	first := to.Masked().Addr().As4()
	last := lastAddr(to).As4()
	typ := expr.NATTypeDestNAT
	if snat {
		typ = expr.NATTypeSourceNAT
	}
	return Rule{
		&expr.Immediate{Register: 1, Data: first[:]},
		&expr.Immediate{Register: 2, Data: last[:]},
		&expr.NAT{Type: typ, Family: unix.NFPROTO_IPV4, RegAddrMin: 1, RegAddrMax: 2, Prefix: true},
	}
}

// SNATTo rewrites the source address to addr.
func SNATTo(addr netip.Addr) Rule {
	a := addr.As4()
	return Rule{
		&expr.Immediate{Register: 1, Data: a[:]},
		&expr.NAT{Type: expr.NATTypeSourceNAT, Family: unix.NFPROTO_IPV4, RegAddrMin: 1},
	}
}

// SetConnMark sets the connection's mark.
func SetConnMark(mark uint32) Rule {
	return Rule{
		&expr.Immediate{Register: 1, Data: hostOrder(mark)},
		&expr.Ct{Key: expr.CtKeyMARK, Register: 1, SourceRegister: true},
	}
}

// ConnMark matches packets of connections with the mark.
func ConnMark(mark uint32) Rule {
	return Rule{
		&expr.Ct{Key: expr.CtKeyMARK, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: hostOrder(mark)},
	}
}

// SetMark sets the packet's firewall mark, which policy rules match.
func SetMark(mark uint32) Rule {
	return Rule{
		&expr.Immediate{Register: 1, Data: hostOrder(mark)},
		&expr.Meta{Key: expr.MetaKeyMARK, Register: 1, SourceRegister: true},
	}
}

// hostOrder is a 32-bit value in the host's byte order, as the kernel
// keeps marks and conntrack states and statuses.
func hostOrder(v uint32) []byte {
	b := make([]byte, 4)
	binary.NativeEndian.PutUint32(b, v)
	return b
}

// ctAnyBit matches packets whose connection has any of bits set in the
// conntrack field key (its state or its status).
func ctAnyBit(key expr.CtKey, bits uint32) Rule {
	return Rule{
		&expr.Ct{Key: key, Register: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 4, Mask: hostOrder(bits), Xor: []byte{0, 0, 0, 0}},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: []byte{0, 0, 0, 0}},
	}
}

// ConnReply matches packets of connections already accepted (established
// or related): answers.
func ConnReply() Rule {
	return ctAnyBit(expr.CtKeySTATE, expr.CtStateBitESTABLISHED|expr.CtStateBitRELATED)
}

// ConnRelated matches packets related to an accepted connection (ICMP
// errors about it).
func ConnRelated() Rule {
	return ctAnyBit(expr.CtKeySTATE, expr.CtStateBitRELATED)
}

// ipsDstNAT is the conntrack status bit of a connection whose destination
// was translated (IPS_DST_NAT in linux/netfilter/nf_conntrack_common.h).
const ipsDstNAT = 1 << 5

// DestNATed matches packets of connections whose destination a DNAT rule
// translated: the address they carry now is not the one they were sent to.
func DestNATed() Rule {
	return ctAnyBit(expr.CtKeySTATUS, ipsDstNAT)
}

// Accept ends a rule by accepting the packet.
func Accept() Rule { return Rule{&expr.Verdict{Kind: expr.VerdictAccept}} }

// CountIn adds the packet to the table's named counter.
func CountIn(counter string) Rule {
	return Rule{&expr.Objref{Type: int(nftables.ObjTypeCounter), Name: counter}}
}

// Goto ends a rule by going on with the regular chain name (no return).
func Goto(chain string) Rule {
	return Rule{&expr.Verdict{Kind: expr.VerdictGoto, Chain: chain}}
}

// UDPDestPort matches UDP packets to port.
func UDPDestPort(port uint16) Rule {
	return Rule{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_UDP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 2, Len: 2},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: binary.BigEndian.AppendUint16(nil, port)},
	}
}

// Drop ends a rule by dropping the packet.
func Drop() Rule { return Rule{&expr.Verdict{Kind: expr.VerdictDrop}} }

// Masquerade rewrites the source address to the outgoing interface's.
func Masquerade() Rule {
	return Rule{&expr.Masq{}}
}

// ClampMSS sets the MSS option of TCP SYNs to the route's MTU minus the
// headers, so that connections through the tunnel never send segments it
// would have to fragment.
func ClampMSS() Rule {
	return Rule{
		&expr.Meta{Key: expr.MetaKeyL4PROTO, Register: 1},
		&expr.Cmp{Op: expr.CmpOpEq, Register: 1, Data: []byte{unix.IPPROTO_TCP}},
		&expr.Payload{DestRegister: 1, Base: expr.PayloadBaseTransportHeader, Offset: 13, Len: 1},
		&expr.Bitwise{SourceRegister: 1, DestRegister: 1, Len: 1, Mask: []byte{0x02}, Xor: []byte{0}},
		&expr.Cmp{Op: expr.CmpOpNeq, Register: 1, Data: []byte{0}},
		&expr.Rt{Register: 1, Key: expr.RtTCPMSS},
		&expr.Byteorder{SourceRegister: 1, DestRegister: 1, Op: expr.ByteorderHton, Len: 2, Size: 2},
		&expr.Exthdr{SourceRegister: 1, Type: 2, Offset: 2, Len: 2, Op: expr.ExthdrOpTcpopt},
	}
}

// Join concatenates rule parts into one rule.
func Join(parts ...Rule) Rule {
	var r Rule
	for _, p := range parts {
		r = append(r, p...)
	}
	return r
}

func prefixMask(bits int) []byte {
	m := make([]byte, 4)
	binary.BigEndian.PutUint32(m, ^uint32(0)<<(32-bits)) // 0 for bits == 0
	return m
}

func lastAddr(p netip.Prefix) netip.Addr {
	a := p.Masked().Addr().As4()
	v := binary.BigEndian.Uint32(a[:]) | ^(^uint32(0) << (32 - p.Bits()))
	var out [4]byte
	binary.BigEndian.PutUint32(out[:], v)
	return netip.AddrFrom4(out)
}

// errNotIPv4 is returned for a prefix the fabric cannot handle.
var errNotIPv4 = errors.New("only IPv4 prefixes are supported")

// CheckPrefix refuses what the builders cannot express.
func CheckPrefix(p netip.Prefix) error {
	if !p.IsValid() || !p.Addr().Is4() {
		return fmt.Errorf("%s: %w", p, errNotIPv4)
	}
	return nil
}
