package info

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Get returns the field at path in doc's JSON form, for --get: a dotted
// path of object keys and list indexes ("local.clusterID",
// "peerings.0.role", in `info peer`: "milan.networking.status"). A
// string is returned as is, anything else as compact JSON, so scripts get
// `Healthy`, not `"Healthy"`.
func Get(doc any, path string) (string, error) {
	data, err := json.Marshal(doc)
	if err != nil {
		return "", err
	}
	var cur any
	if err := json.Unmarshal(data, &cur); err != nil {
		return "", err
	}
	if path == "" {
		return "", fmt.Errorf("--get needs a field, such as local.clusterID")
	}
	walked := []string{}
	for _, seg := range strings.Split(path, ".") {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[seg]
			if !ok {
				return "", fmt.Errorf("no field %q in %s (it has: %s)", seg, where(walked), strings.Join(keys(v), ", "))
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(seg)
			if err != nil || i < 0 || i >= len(v) {
				return "", fmt.Errorf("%s is a list of %d: %q is not an index in it", where(walked), len(v), seg)
			}
			cur = v[i]
		default:
			return "", fmt.Errorf("%s is a value, it has no field %q", where(walked), seg)
		}
		walked = append(walked, seg)
	}
	if s, ok := cur.(string); ok {
		return s, nil
	}
	out, err := json.Marshal(cur)
	return string(out), err
}

func where(walked []string) string {
	if len(walked) == 0 {
		return "the document"
	}
	return strings.Join(walked, ".")
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
