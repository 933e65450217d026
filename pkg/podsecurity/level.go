package podsecurity

import "fmt"

// Level is a Pod Security Standards level a provider enforces on the pods
// of its consumers. There is no "privileged" level: a consumer's pod never
// gets the provider's host.
type Level string

const (
	// Baseline prevents the known privilege escalations and admits the
	// pods most workloads ship: the default.
	Baseline Level = "baseline"
	// Restricted also requires the hardening of current best practice
	// (non-root, no privilege escalation, every capability dropped, a
	// seccomp profile), which many images and charts do not meet.
	Restricted Level = "restricted"
)

// The labels of Pod Security Admission on a namespace.
const (
	EnforceLabel        = "pod-security.kubernetes.io/enforce"
	EnforceVersionLabel = "pod-security.kubernetes.io/enforce-version"
	// LatestVersion makes the API server apply the standard as it knows
	// it, as Check does for the version it was written for.
	LatestVersion = "latest"
)

// OrDefault is l, or Baseline when l is unset.
func (l Level) OrDefault() Level {
	if l == "" {
		return Baseline
	}
	return l
}

// Validate refuses a level that is not Baseline, Restricted or unset.
func (l Level) Validate() error {
	switch l.OrDefault() {
	case Baseline, Restricted:
		return nil
	}
	return fmt.Errorf("pod security level %q is neither %q nor %q", string(l), Baseline, Restricted)
}

// String is the level's name, the default's when unset.
func (l Level) String() string { return string(l.OrDefault()) }

// Set parses a flag value.
func (l *Level) Set(s string) error {
	v := Level(s)
	if err := v.Validate(); err != nil {
		return err
	}
	*l = v
	return nil
}

// Type names the flag value's type in help texts.
func (l *Level) Type() string { return "level" }

// NamespaceLabels are the labels that make Pod Security Admission enforce
// l in a namespace.
func NamespaceLabels(l Level) map[string]string {
	return map[string]string{EnforceLabel: string(l.OrDefault()), EnforceVersionLabel: LatestVersion}
}
