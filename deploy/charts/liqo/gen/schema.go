package gen

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

// SchemaFile is the chart's values schema, relative to the chart: Helm
// checks every install's and upgrade's values against it, so that a
// mistyped key (--set sharing.percentag=30) fails instead of being
// ignored.
const SchemaFile = "values.schema.json"

// freeForm are the values whose keys are the user's, not the chart's:
// labels, node selectors, a container's resources, and the reference's
// ingress settings (refused as a whole by the chart, with what to use
// instead). Every empty mapping of values.yaml (clusterLabels: {}) is
// free-form too.
var freeForm = []string{"controllerManager.resources", "auth.ingress"}

// ValuesSchema derives the JSON schema of values.yaml: every mapping admits
// the keys it has there and no other, each value the type of its default.
// A string value also takes a number, as --set 'tag=1' passes one.
func ValuesSchema(valuesYAML []byte) ([]byte, error) {
	var values map[string]any
	if err := yaml.Unmarshal(valuesYAML, &values); err != nil {
		return nil, fmt.Errorf("values.yaml: %w", err)
	}
	schema := schemaOf("", values)
	schema["$schema"] = "https://json-schema.org/draft-07/schema#"
	schema["title"] = "Values of the liqo chart (generated from values.yaml by make generate)"
	b, err := json.MarshalIndent(schema, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

func schemaOf(path string, v any) map[string]any {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 || slices.Contains(freeForm, path) {
			return map[string]any{"type": "object"}
		}
		props := map[string]any{}
		for k, sub := range v {
			props[k] = schemaOf(strings.TrimPrefix(path+"."+k, "."), sub)
		}
		return map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	case []any:
		return map[string]any{"type": "array"}
	case bool:
		return map[string]any{"type": "boolean"}
	case float64:
		if v == math.Trunc(v) {
			return map[string]any{"type": "integer"}
		}
		return map[string]any{"type": "number"}
	case string:
		return map[string]any{"type": []string{"string", "number"}}
	default: // null: anything
		return map[string]any{}
	}
}
