package coredns

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// ClustersetZone is the DNS zone of the Multi-Cluster Services API's
// imported Services (<service>.<namespace>.svc.clusterset.local).
const ClustersetZone = "clusterset.local"

// ManualDNSStep is what to do by hand where liqoctl cannot configure the
// cluster's DNS: the two edits --configure-dns makes. Errors end with it.
const ManualDNSStep = `configure it by hand: in the Corefile of the cluster's CoreDNS (1.12 or later), add ` + ClustersetZone + ` to the zones of the
kubernetes plugin and the option "multicluster ` + ClustersetZone + `" inside its block, e.g.
    kubernetes cluster.local ` + ClustersetZone + ` in-addr.arpa ip6.arpa {
        multicluster ` + ClustersetZone + `
        ...
    }
and let CoreDNS list and watch ServiceImports: a rule for apiGroups multicluster.x-k8s.io,
resources serviceimports, verbs list and watch, in the ClusterRole its service account has
(system:coredns on kubeadm)`

// AddClustersetZone returns corefile with the kubernetes plugin serving
// ClustersetZone through its multicluster option: the zone added to the
// plugin's zones (and to its server block's, if they do not cover it) and
// a "multicluster clusterset.local" line in its block (a block added if it
// has none). Everything else is kept byte for byte; a Corefile already
// configured comes back unchanged. It fails, naming the manual step, when
// there is not exactly one kubernetes plugin or the edit would be a guess
// (a one-line block, another server block claiming the zone). Pure.
func AddClustersetZone(corefile string) (string, error) {
	toks, err := tokenize(corefile)
	if err != nil {
		return "", err
	}
	blocks, err := serverBlocks(toks)
	if err != nil {
		return "", err
	}
	type found struct {
		block *serverBlock
		d     directive
	}
	var k8s []found
	imports := false
	for i := range blocks {
		for _, d := range blocks[i].directives {
			switch toks[d.name].text {
			case "kubernetes":
				k8s = append(k8s, found{&blocks[i], d})
			case "import":
				imports = true
			}
		}
	}
	switch {
	case len(k8s) == 0 && imports:
		return "", fmt.Errorf("the Corefile has no kubernetes plugin of its own (it imports others, which liqoctl does not edit): %s", ManualDNSStep)
	case len(k8s) == 0:
		return "", fmt.Errorf("the Corefile has no kubernetes plugin, so this CoreDNS does not serve the cluster's Services: %s", ManualDNSStep)
	case len(k8s) > 1:
		return "", fmt.Errorf("the Corefile has %d kubernetes plugins, and liqoctl does not guess which one to extend: %s", len(k8s), ManualDNSStep)
	}
	sb, d := k8s[0].block, k8s[0].d
	e := &editor{src: corefile}

	// The server block must receive the zone's queries: no other one may
	// name the zone or a parent of it (CoreDNS gives a query to the most
	// specific), and its own keys must cover it.
	for i := range blocks {
		if &blocks[i] != sb && claims(toks, blocks[i].keys, ClustersetZone) {
			return "", fmt.Errorf("the server block %q of the Corefile serves %s already, and the kubernetes plugin is in another one: %s",
				keysText(toks, blocks[i].keys), ClustersetZone, ManualDNSStep)
		}
	}
	if !covers(toks, sb.keys, ClustersetZone) {
		last := sb.keys[len(sb.keys)-1]
		e.insert(toks[last].end, " "+withPortOf(toks[sb.keys[0]].text, ClustersetZone))
	}

	// The plugin's zones: without any it takes its server block's, which
	// must then be written out for the new zone to join them.
	zones := d.args
	if !slices.ContainsFunc(zones, func(i int) bool { return sameZone(toks[i].text, ClustersetZone) }) {
		switch {
		case len(zones) > 0:
			// Among the forward zones, ahead of the reverse ones, as
			// the zones are usually listed.
			at := toks[d.name].end
			for _, z := range zones {
				if !strings.HasSuffix(norm(toks[z].text), ".arpa") {
					at = toks[z].end
				}
			}
			e.insert(at, " "+ClustersetZone)
		default:
			var own []string
			for _, k := range sb.keys {
				own = append(own, zoneOf(toks[k].text))
			}
			e.insert(toks[d.name].end, " "+strings.Join(append(own, ClustersetZone), " "))
		}
	}

	// The multicluster option, in the plugin's block.
	indent := lineIndent(corefile, toks[d.name].start)
	switch {
	case d.open < 0:
		end := toks[d.name].end
		if len(d.args) > 0 {
			end = toks[d.args[len(d.args)-1]].end
		}
		inner := indent + indentStep(indent)
		e.insert(end, " {\n"+inner+"multicluster "+ClustersetZone+"\n"+indent+"}")
	case toks[d.close].line == toks[d.open].line || (d.close > d.open+1 && toks[d.open+1].line == toks[d.open].line):
		return "", fmt.Errorf("the kubernetes plugin's block is on one line (line %d), which liqoctl does not rewrite: %s", toks[d.open].line, ManualDNSStep)
	default:
		if mc := d.option(toks, "multicluster"); mc != nil {
			if !slices.ContainsFunc(mc.args, func(i int) bool { return sameZone(toks[i].text, ClustersetZone) }) {
				end := toks[mc.name].end
				if len(mc.args) > 0 {
					end = toks[mc.args[len(mc.args)-1]].end
				}
				e.insert(end, " "+ClustersetZone)
			}
			break
		}
		closing := toks[d.close]
		if lineIndexOf(toks, d.close) != 0 {
			return "", fmt.Errorf("the kubernetes plugin's block closes after an option on line %d, which liqoctl does not rewrite: %s", closing.line, ManualDNSStep)
		}
		inner := indent + indentStep(indent)
		if len(d.options) > 0 {
			inner = lineIndent(corefile, toks[d.options[0].name].start)
		}
		lineStart := strings.LastIndexByte(corefile[:closing.start], '\n') + 1
		e.insert(lineStart, inner+"multicluster "+ClustersetZone+"\n")
	}
	return e.apply(), nil
}

// token is one word of a Corefile, at src[start:end], on line line
// (1-based); quoted words keep their quotes.
type token struct {
	text       string
	start, end int
	line       int
	// first tells that the token starts its line.
	first bool
}

// tokenize splits a Corefile into words as CoreDNS's lexer does:
// whitespace separates them, "#" at the start of a word comments out the
// rest of the line, double quotes (with backslash escapes) keep a word
// whole.
func tokenize(src string) ([]token, error) {
	var toks []token
	line, first := 1, true
	for i := 0; i < len(src); {
		switch c := src[i]; c {
		case '\n':
			line, first = line+1, true
			i++
		case ' ', '\t', '\r':
			i++
		case '#':
			for i < len(src) && src[i] != '\n' {
				i++
			}
		default:
			start, startLine := i, line
			if c == '"' {
				i++
				for i < len(src) && src[i] != '"' {
					if src[i] == '\\' {
						i++
					}
					if i < len(src) && src[i] == '\n' {
						line++
					}
					i++
				}
				if i >= len(src) {
					return nil, fmt.Errorf("the Corefile has an unterminated quoted string on line %d", startLine)
				}
				i++
			} else {
				for i < len(src) && !strings.ContainsRune(" \t\r\n", rune(src[i])) {
					i++
				}
			}
			toks = append(toks, token{text: src[start:i], start: start, end: i, line: startLine, first: first})
			first = false
		}
	}
	return toks, nil
}

// serverBlock is one server block: its keys (token indices, e.g. ".:53")
// and its directives.
type serverBlock struct {
	keys       []int
	directives []directive
}

// directive is a plugin line, or an option line inside a plugin's block:
// its name and arguments (token indices), and its block's braces (-1 when
// it has none) with the options inside.
type directive struct {
	name        int
	args        []int
	open, close int
	options     []directive
}

// option is the first option of d named name, nil if none.
func (d *directive) option(toks []token, name string) *directive {
	for i := range d.options {
		if toks[d.options[i].name].text == name {
			return &d.options[i]
		}
	}
	return nil
}

// serverBlocks parses the tokens into server blocks; snippets ("(name) {
// ... }") are skipped.
func serverBlocks(toks []token) ([]serverBlock, error) {
	var out []serverBlock
	for i := 0; i < len(toks); {
		var keys []int
		for i < len(toks) && toks[i].text != "{" {
			if toks[i].text == "}" {
				return nil, fmt.Errorf("the Corefile has an unmatched } on line %d", toks[i].line)
			}
			keys = append(keys, i)
			i++
		}
		if i == len(toks) {
			if len(keys) > 0 {
				return nil, fmt.Errorf("the Corefile's server block %q on line %d has no body", toks[keys[0]].text, toks[keys[0]].line)
			}
			break
		}
		if len(keys) == 0 {
			return nil, fmt.Errorf("the Corefile has a block without server keys on line %d", toks[i].line)
		}
		body, next, err := directives(toks, i+1)
		if err != nil {
			return nil, err
		}
		if !strings.HasPrefix(toks[keys[0]].text, "(") {
			out = append(out, serverBlock{keys: keys, directives: body})
		}
		i = next
	}
	return out, nil
}

// directives parses the lines of a block from toks[i] to its closing brace
// and returns them with the index after that brace.
func directives(toks []token, i int) ([]directive, int, error) {
	var out []directive
	for i < len(toks) {
		if toks[i].text == "}" {
			return out, i + 1, nil
		}
		d := directive{name: i, open: -1, close: -1}
		line := toks[i].line
		i++
		for i < len(toks) && toks[i].line == line && !toks[i].first && toks[i].text != "{" && toks[i].text != "}" {
			d.args = append(d.args, i)
			i++
		}
		if i < len(toks) && toks[i].text == "{" {
			d.open = i
			opts, next, err := directives(toks, i+1)
			if err != nil {
				return nil, 0, err
			}
			d.options, d.close, i = opts, next-1, next
		}
		out = append(out, d)
	}
	return nil, 0, fmt.Errorf("the Corefile has a block that is never closed (opened on line %d)", toks[i-1].line)
}

// zoneOf is the zone of a server block key: without its scheme
// ("dns://") and port.
func zoneOf(key string) string {
	if _, rest, ok := strings.Cut(key, "://"); ok {
		key = rest
	}
	if i := strings.LastIndexByte(key, ':'); i >= 0 {
		key = key[:i]
	}
	return key
}

// withPortOf is zone as a server block key with key's scheme and port.
func withPortOf(key, zone string) string {
	scheme := ""
	if s, rest, ok := strings.Cut(key, "://"); ok {
		scheme, key = s+"://", rest
	}
	port := ""
	if i := strings.LastIndexByte(key, ':'); i >= 0 {
		port = key[i:]
	}
	return scheme + zone + port
}

// norm is a zone's canonical form: lower case, no trailing dot ("" for
// the root).
func norm(zone string) string { return strings.TrimSuffix(strings.ToLower(zone), ".") }

func sameZone(a, b string) bool { return norm(a) == norm(b) }

// inZone tells whether name is zone or below it.
func inZone(name, zone string) bool {
	name, zone = norm(name), norm(zone)
	return zone == "" || name == zone || strings.HasSuffix(name, "."+zone)
}

// covers tells whether the server block keys receive the queries of
// zone.
func covers(toks []token, keys []int, zone string) bool {
	return slices.ContainsFunc(keys, func(k int) bool { return inZone(zone, zoneOf(toks[k].text)) })
}

// claims tells whether the keys name zone or one of its parents other
// than the root: a server block more specific than a catch-all one.
func claims(toks []token, keys []int, zone string) bool {
	return slices.ContainsFunc(keys, func(k int) bool {
		z := zoneOf(toks[k].text)
		return norm(z) != "" && inZone(zone, z)
	})
}

func keysText(toks []token, keys []int) string {
	var s []string
	for _, k := range keys {
		s = append(s, toks[k].text)
	}
	return strings.Join(s, " ")
}

// lineIndexOf is the position of toks[i] on its line (0: first).
func lineIndexOf(toks []token, i int) int {
	n := 0
	for j := i - 1; j >= 0 && toks[j].line == toks[i].line; j-- {
		n++
	}
	return n
}

// lineIndent is the whitespace that starts the line holding offset.
func lineIndent(src string, offset int) string {
	start := strings.LastIndexByte(src[:offset], '\n') + 1
	end := start
	for end < len(src) && (src[end] == ' ' || src[end] == '\t') {
		end++
	}
	return src[start:end]
}

// indentStep is one more level of indentation, in the style of indent.
func indentStep(indent string) string {
	if strings.Contains(indent, "\t") {
		return "\t"
	}
	return "    "
}

// editor collects insertions into src and applies them at once, so that
// the token offsets stay valid meanwhile.
type editor struct {
	src string
	ins []insertion
}

type insertion struct {
	at   int
	text string
	seq  int
}

func (e *editor) insert(at int, text string) {
	e.ins = append(e.ins, insertion{at, text, len(e.ins)})
}

func (e *editor) apply() string {
	// By offset, and in the order made at the same offset.
	slices.SortFunc(e.ins, func(a, b insertion) int { return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.seq, b.seq)) })
	var b strings.Builder
	prev := 0
	for _, in := range e.ins {
		b.WriteString(e.src[prev:in.at])
		b.WriteString(in.text)
		prev = in.at
	}
	b.WriteString(e.src[prev:])
	return b.String()
}

// Reloads tells whether the server block of corefile's kubernetes plugin
// has the reload plugin, which makes CoreDNS load its Corefile again when
// the file changes. Pure.
func Reloads(corefile string) bool {
	toks, err := tokenize(corefile)
	if err != nil {
		return false
	}
	blocks, err := serverBlocks(toks)
	if err != nil {
		return false
	}
	for _, b := range blocks {
		k8s, reload := false, false
		for _, d := range b.directives {
			k8s = k8s || toks[d.name].text == "kubernetes"
			reload = reload || toks[d.name].text == "reload"
		}
		if k8s {
			return reload
		}
	}
	return false
}
