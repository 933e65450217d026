package install

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// unknownValue names the first key of vals that the chart's values schema
// does not know, with the keys it knows at that level, or "" if every key
// is known. Helm refuses such values too, but names only the key; a user
// who mistyped one wants to see the right spelling.
func unknownValue(schemaJSON []byte, vals map[string]any) (string, error) {
	if len(schemaJSON) == 0 {
		return "", nil // a chart without a schema (an older development chart)
	}
	var schema map[string]any
	if err := json.Unmarshal(schemaJSON, &schema); err != nil {
		return "", fmt.Errorf("the chart's values schema: %w", err)
	}
	return unknownIn("", schema, vals), nil
}

func unknownIn(path string, schema map[string]any, vals map[string]any) string {
	props, _ := schema["properties"].(map[string]any)
	if props == nil || schema["additionalProperties"] != false {
		return "" // free-form: labels, node selectors, resources
	}
	for _, k := range slices.Sorted(maps.Keys(vals)) {
		name := strings.TrimPrefix(path+"."+k, ".")
		sub, ok := props[k].(map[string]any)
		if !ok {
			where := "at the top level"
			if path != "" {
				where = "under " + path
			}
			return fmt.Sprintf("unknown chart value %s: the chart has %s %s (liqoctl install --help, or the values reference in docs/helm-values.md)",
				name, strings.Join(slices.Sorted(maps.Keys(props)), ", "), where)
		}
		if m, ok := vals[k].(map[string]any); ok {
			if msg := unknownIn(name, sub, m); msg != "" {
				return msg
			}
		}
	}
	return ""
}
