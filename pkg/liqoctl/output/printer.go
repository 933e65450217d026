// Package output prints liqoctl's step-by-step progress: a line naming the
// step when it starts, and an INFO, WARN or ERROR line when it ends; and
// the manifests commands print for users to apply elsewhere.
package output

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"sigs.k8s.io/yaml"
)

// Printer writes progress lines.
type Printer struct {
	W       io.Writer
	Verbose bool
}

// Step announces a step.
func (p *Printer) Step(format string, args ...any) { fmt.Fprintf(p.W, format+"\n", args...) }

// Info reports a completed step.
func (p *Printer) Info(format string, args ...any) { fmt.Fprintf(p.W, "INFO: "+format+"\n", args...) }

// Warn reports something the user should know about but that did not stop
// the command.
func (p *Printer) Warn(format string, args ...any) { fmt.Fprintf(p.W, "WARN: "+format+"\n", args...) }

// Timed reports a completed step with its duration when verbose.
func (p *Printer) Timed(start time.Time, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if p.Verbose {
		msg += fmt.Sprintf(" (%s)", time.Since(start).Round(time.Millisecond))
	}
	p.Info("%s", msg)
}

// CheckFormat says whether format is one Manifest writes, naming the flag.
func CheckFormat(format string) error {
	switch format {
	case "", "yaml", "json":
		return nil
	}
	return fmt.Errorf("--output %q: the formats are yaml and json", format)
}

// Manifest writes obj (a Kubernetes object with its apiVersion and kind
// set) as a manifest to apply, as yaml (format "" or "yaml") or json: the
// status and the fields the API server sets are left out, since they are
// not for users to apply.
func Manifest(w io.Writer, obj any, format string) error {
	if err := CheckFormat(format); err != nil {
		return err
	}
	raw, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	delete(m, "status")
	if meta, ok := m["metadata"].(map[string]any); ok {
		for _, k := range []string{"creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"} {
			delete(meta, k)
		}
	}
	var data []byte
	if format == "json" {
		data, err = json.MarshalIndent(m, "", "  ")
		data = append(data, '\n')
	} else {
		data, err = yaml.Marshal(m)
	}
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
