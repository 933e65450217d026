package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"
)

// measurement is one figure of a run, as -o json prints it, so that runs of
// different versions can be compared by a script: what was measured, on
// which suite, size and client-QPS profile, and the value, or the vanilla
// and offloaded values side by side where the suite compares the two.
type measurement struct {
	Suite   string `json:"suite"`
	Measure string `json:"measure"`
	// N is the suite's size (Deployment replicas, reflected objects), 0 where
	// it has none.
	N int `json:"n,omitempty"`
	// Profile names the control plane's client rate limits; QPS is its
	// figure (0: the upstream defaults).
	Profile string  `json:"profile,omitempty"`
	QPS     float64 `json:"qps,omitempty"`
	Unit    string  `json:"unit"`
	// Value, or Vanilla and Offloaded (or the fabric's "within a cluster"
	// and "through the fabric").
	Value     *float64 `json:"value,omitempty"`
	Vanilla   *float64 `json:"vanilla,omitempty"`
	Offloaded *float64 `json:"offloaded,omitempty"`
}

var (
	// tables is where the human tables go: stdout, or nowhere with -o json.
	tables io.Writer = os.Stdout
	// measurements gathers every figure the suites print.
	measurements []measurement
)

// record adds a figure to the JSON report.
func record(m measurement) { measurements = append(measurements, m) }

// valueTable is a two-column table of one suite's figures (measure, value
// as shown) on tables, each row also recorded for the JSON report.
type valueTable struct {
	w     *tabwriter.Writer
	suite string
	n     int
}

// newValueTable prints title and the header of a suite's table of size n.
func newValueTable(suite string, n int, title string) *valueTable {
	fmt.Fprintf(tables, "\n%s\n", title)
	t := &valueTable{w: tabwriter.NewWriter(tables, 0, 4, 2, ' ', tabwriter.AlignRight), suite: suite, n: n}
	fmt.Fprintln(t.w, "measure\tvalue\t")
	return t
}

// row prints measure with its value as shown, and records m under it.
func (t *valueTable) row(measure, shown string, m measurement) {
	fmt.Fprintf(t.w, "%s\t%s\t\n", measure, shown)
	m.Suite, m.Measure, m.N = t.suite, measure, t.n
	record(m)
}

// flush writes the table out.
func (t *valueTable) flush() { _ = t.w.Flush() }

// seconds and megabytes are a figure's value in the report's units.
func seconds(d time.Duration) *float64 { v := d.Seconds(); return &v }
func megabytes(b int64) *float64       { v := float64(b) / 1e6; return &v }
func number(v float64) *float64        { return &v }

// writeJSON prints the gathered figures as one JSON array.
func writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if measurements == nil {
		measurements = []measurement{}
	}
	return enc.Encode(measurements)
}
