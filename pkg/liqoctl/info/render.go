package info

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// entry is one line of a box: a field (label and value, values aligned in a
// column across the box) or, with no label, a plain text line.
type entry struct {
	indent       int
	label, value string
}

const fieldIndent = 6

func text(indent int, s string) entry { return entry{indent: indent, value: s} }
func field(label, value string) entry {
	return entry{indent: fieldIndent, label: label, value: value}
}

// Render returns the human-readable summary: a box about the local cluster,
// one about the peerings and, when there are any, one about the
// Multi-Cluster Services. verbose adds URLs, tenant namespaces, resource
// slices and the modules' conditions.
func Render(info *Info, verbose bool) string {
	return renderLocal(&info.Local, verbose) + renderPeerings(info.Peerings, verbose) + renderServices(&info.Services)
}

// renderServices lists the exports, with why one is not in, and the
// imports, with the clusters backing each; nothing when there are none.
func renderServices(s *Services) string {
	if len(s.Exports) == 0 && len(s.Imports) == 0 {
		return ""
	}
	var entries []entry
	if len(s.Exports) > 0 {
		entries = append(entries, text(2, "Exported"))
		for _, e := range s.Exports {
			line := e.Status
			if e.Reason != "" {
				line += " (" + e.Reason
				if e.Message != "" {
					line += ": " + e.Message
				}
				line += ")"
			}
			entries = append(entries, field(e.Namespace+"/"+e.Name+":", line))
		}
	}
	if len(s.Imports) > 0 {
		entries = append(entries, text(2, "Imported"))
		for _, in := range s.Imports {
			line := in.Type
			if len(in.IPs) > 0 {
				line += " " + strings.Join(in.IPs, ",")
			}
			if len(in.Ports) > 0 {
				line += " " + strings.Join(in.Ports, ",")
			}
			line += ", from " + orNone(in.Clusters)
			entries = append(entries, field(in.Namespace+"/"+in.Name+":", line))
		}
	}
	return box("Multi-cluster services", 1, entries)
}

func renderLocal(l *LocalCluster, verbose bool) string {
	entries := []entry{
		text(2, "Cluster identity"),
		field("Cluster ID:", l.ClusterID),
		field("Cluster labels:", formatMap(l.Labels)),
	}
	if verbose {
		entries = append(entries, field("Liqo namespace:", l.Namespace), field("API server URL:", l.APIServerURL))
	}
	return box("Local cluster information", 2, entries)
}

func renderPeerings(peerings []Peering, verbose bool) string {
	var entries []entry
	if len(peerings) == 0 {
		entries = append(entries, text(2, "No active peerings"))
	}
	for i := range peerings {
		if i > 0 {
			entries = append(entries, text(0, ""))
		}
		entries = append(entries, peeringEntries(&peerings[i], verbose)...)
	}
	return box("Active peerings", 1, entries)
}

func peeringEntries(p *Peering, verbose bool) []entry {
	entries := []entry{text(2, p.ClusterID), field("Role:", p.Role)}
	for _, m := range []struct {
		name string
		info *ModuleInfo
	}{{"Authentication", &p.Authentication}, {"Offloading", &p.Offloading}, {"Networking", &p.Networking}} {
		entries = append(entries, field(m.name+" status:", m.info.Status))
		if m.info.Latency != "" {
			entries = append(entries, field(m.name+" latency:", m.info.Latency))
		}
		if verbose {
			for _, c := range m.info.Conditions {
				line := c.Type + ": " + c.Status
				if c.Message != "" {
					line += " (" + c.Message + ")"
				}
				entries = append(entries, text(fieldIndent+4, line))
			}
		}
	}
	if verbose {
		entries = append(entries,
			field("API server URL:", p.APIServerURL),
			field("Local tenant namespace:", p.TenantNamespace.Local),
			field("Remote tenant namespace:", p.TenantNamespace.Remote))
	}
	provider := IsProvider(p.Role)
	if provider || len(p.VirtualNodes) > 0 {
		entries = append(entries, field("Virtual nodes:", formatVirtualNodes(p.VirtualNodes)))
	}
	if verbose && len(p.ResourceSlices) > 0 {
		entries = append(entries, field("Resource slices:", formatSlices(p.ResourceSlices)))
	}
	if provider {
		entries = append(entries, field("Resources acquired:", formatMap(p.ResourcesAcquired)))
	}
	if IsConsumer(p.Role) {
		entries = append(entries, field("Resources shared:", formatMap(p.ResourcesShared)))
	}
	return entries
}

func formatVirtualNodes(vns []VirtualNodeInfo) string {
	if len(vns) == 0 {
		return "none"
	}
	parts := make([]string, 0, len(vns))
	for _, vn := range vns {
		state := "Ready"
		if !vn.Ready {
			state = "NotReady"
			if vn.Reason != "" {
				state += ": " + vn.Reason
			}
		}
		parts = append(parts, fmt.Sprintf("%s (%s)", vn.Name, state))
	}
	return strings.Join(parts, ", ")
}

func formatSlices(slices []ResourceSliceInfo) string {
	parts := make([]string, 0, len(slices))
	for _, s := range slices {
		parts = append(parts, fmt.Sprintf("%s (authentication %s, resources %s)", s.Name, s.Authentication, s.Resources))
	}
	return strings.Join(parts, ", ")
}

// formatMap prints k=v pairs sorted by key, or "none".
func formatMap(m map[string]string) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		parts = append(parts, k+"="+m[k])
	}
	return strings.Join(parts, ", ")
}

// box draws entries in a frame titled title, as wide as its longest line.
// Field values start gap spaces after the longest label. Widths are counted
// in runes.
func box(title string, gap int, entries []entry) string {
	labelWidth := 0
	for _, e := range entries {
		labelWidth = max(labelWidth, runes(e.label))
	}
	lines := make([]string, 0, len(entries))
	width := 0
	for _, e := range entries {
		line := strings.Repeat(" ", e.indent)
		if e.label != "" {
			line += e.label + strings.Repeat(" ", labelWidth-runes(e.label)+gap)
		}
		line += oneLine(e.value)
		if strings.TrimSpace(line) == "" {
			line = ""
		}
		lines = append(lines, line)
		width = max(width, runes(line))
	}
	// inner is the width between the borders: the content plus two spaces
	// on the right, and at least enough for the title.
	inner := max(width+2, runes(title)+4)
	var b strings.Builder
	b.WriteString("┌─ " + title + " " + strings.Repeat("─", inner-3-runes(title)) + "┐\n")
	for _, l := range lines {
		b.WriteString("│" + l + strings.Repeat(" ", inner-runes(l)) + "│\n")
	}
	b.WriteString("└" + strings.Repeat("─", inner) + "┘\n")
	return b.String()
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// oneLine keeps a value from breaking the frame.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\r' || r == '\t' {
			return ' '
		}
		return r
	}, s)
}
