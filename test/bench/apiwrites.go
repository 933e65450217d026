package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"k8s.io/client-go/kubernetes"

	"github.com/liqo-go/liqo/test/harness"
)

// writeVerbs are the verbs of apiserver_request_total that change state.
var writeVerbs = map[string]bool{"POST": true, "PUT": true, "PATCH": true, "DELETE": true, "DELETECOLLECTION": true, "APPLY": true}

// apiWrites reads an API server's own count of the write requests it
// served (apiserver_request_total), by "VERB resource[/subresource]": the
// API work a run costs, whoever sent it.
func apiWrites(ctx context.Context, cs kubernetes.Interface) (map[string]float64, error) {
	families, err := harness.APIServerMetrics(ctx, cs)
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	for _, m := range families["apiserver_request_total"].GetMetric() {
		labels := harness.Labels(m)
		key := labels["verb"] + " " + labels["resource"]
		if sub := labels["subresource"]; sub != "" {
			key += "/" + sub
		}
		if code := labels["code"]; code != "" && code[0] != '2' {
			// Refused or failed requests apart: they are work someone
			// sent for nothing (a delete of a pod already gone is a 404).
			key += " (" + code + ")"
		}
		if !writeVerbs[labels["verb"]] {
			// Reads (GET, LIST, WATCH) are kept apart: they cost the API
			// server too, but are not the writes the totals count.
			key = readPrefix + key
		}
		out[key] += m.GetCounter().GetValue()
	}
	// The admission webhooks the API server called, ours included.
	for _, m := range families["apiserver_admission_webhook_request_total"].GetMetric() {
		labels := harness.Labels(m)
		out[webhookPrefix+labels["name"]+" "+labels["operation"]] += m.GetCounter().GetValue()
	}
	return out, nil
}

// The key prefixes of the counts apiWrites returns besides the writes.
const (
	readPrefix    = "read: "
	webhookPrefix = "webhook: "
)

// only keeps the counts whose keys have prefix, without it; "" keeps the
// writes.
func only(counts map[string]float64, prefix string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range counts {
		switch {
		case prefix != "" && strings.HasPrefix(k, prefix):
			out[strings.TrimPrefix(k, prefix)] = v
		case prefix == "" && !strings.HasPrefix(k, readPrefix) && !strings.HasPrefix(k, webhookPrefix):
			out[k] = v
		}
	}
	return out
}

// writeDelta is after − before, the zero counts left out.
func writeDelta(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

// total sums the write counts.
func total(counts map[string]float64) float64 {
	var t float64
	for _, v := range only(counts, "") {
		t += v
	}
	return t
}

// perPodSummary lists the counts per pod, the largest first, as
// "VERB resource 2.0" items.
func perPodSummary(counts map[string]float64, pods int, most int) string {
	keys := slices.SortedFunc(maps.Keys(counts), func(a, b string) int {
		if counts[a] != counts[b] {
			if counts[a] > counts[b] {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, k := range keys[:min(most, len(keys))] {
		parts = append(parts, fmt.Sprintf("%s %.1f", k, counts[k]/float64(pods)))
	}
	return strings.Join(parts, ", ")
}
