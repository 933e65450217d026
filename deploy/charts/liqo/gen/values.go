package gen

import (
	"bufio"
	"bytes"
	"fmt"
	"strings"
)

// ValuesReference renders the chart's values.yaml as a Markdown table:
// each value's dotted name, default and the "# --" comment above it (a
// comment may go on over the lines that follow, each starting with "#").
func ValuesReference(valuesYAML []byte) (string, error) {
	var out strings.Builder
	out.WriteString("| value | default | description |\n|---|---|---|\n")
	var path []string     // keys of the enclosing mappings
	var indents []int     // their indentation
	var documented []bool // whether a mapping has its own row, which covers its keys
	var doc []string      // the pending "# --" comment
	inDoc := false
	sc := bufio.NewScanner(bytes.NewReader(valuesYAML))
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "# --"):
			doc, inDoc = []string{strings.TrimSpace(strings.TrimPrefix(trimmed, "# --"))}, true
			continue
		case strings.HasPrefix(trimmed, "#"):
			if inDoc {
				doc = append(doc, strings.TrimSpace(strings.TrimPrefix(trimmed, "#")))
			}
			continue
		case trimmed == "":
			doc, inDoc = nil, false
			continue
		}
		inDoc = false
		indent := len(line) - len(strings.TrimLeft(line, " "))
		key, value, ok := strings.Cut(trimmed, ":")
		if !ok || strings.HasPrefix(trimmed, "-") {
			continue // an item of a list value
		}
		for len(indents) > 0 && indents[len(indents)-1] >= indent {
			path, indents, documented = path[:len(path)-1], indents[:len(indents)-1], documented[:len(documented)-1]
		}
		value = strings.TrimSpace(value)
		name := strings.Join(append(append([]string{}, path...), key), ".")
		covered := len(documented) > 0 && documented[len(documented)-1]
		if value == "" {
			// A mapping: its keys follow, more indented.
			path, indents = append(path, key), append(indents, indent)
			documented = append(documented, covered || doc != nil)
			if doc != nil && !covered {
				fmt.Fprintf(&out, "| `%s` | | %s |\n", name, strings.Join(doc, " "))
			}
			doc = nil
			continue
		}
		if covered {
			continue
		}
		if doc == nil {
			return "", fmt.Errorf("values.yaml: %s has no \"# --\" comment saying what it is", name)
		}
		fmt.Fprintf(&out, "| `%s` | `%s` | %s |\n", name, strings.ReplaceAll(value, "|", "\\|"), strings.Join(doc, " "))
		doc = nil
	}
	return out.String(), sc.Err()
}
