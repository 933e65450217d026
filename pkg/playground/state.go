package playground

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/liqo-go/liqo/pkg/proc"
)

// Phases of a playground cluster, as published by its owner process.
const (
	phaseStarting = "Starting"
	phaseReady    = "Ready"
	phaseFailed   = "Failed"
)

// clusterState is what an owner process publishes about its cluster.
type clusterState struct {
	Name       string `json:"name"`
	PID        int    `json:"pid"`
	Phase      string `json:"phase"`
	Error      string `json:"error,omitempty"`
	Server     string `json:"server,omitempty"`
	Kubeconfig string `json:"kubeconfig,omitempty"`
	// Networking tells that the cluster runs the network fabric: it has
	// real nodes, and our gateway and node agent images were published in
	// its registry.
	Networking bool      `json:"networking,omitempty"`
	Updated    time.Time `json:"updated"`
}

// layout names the files of a playground directory.
type layout struct{ dir string }

func (l layout) state(name string) string      { return filepath.Join(l.dir, name+".state.json") }
func (l layout) kubeconfig(name string) string { return filepath.Join(l.dir, name+".kubeconfig") }
func (l layout) log(name string) string        { return filepath.Join(l.dir, name+".log") }
func (l layout) data() string                  { return filepath.Join(l.dir, "data") }
func (l layout) bin() string                   { return filepath.Join(l.dir, "bin") }

func (l layout) read(name string) (*clusterState, error) {
	data, err := os.ReadFile(l.state(name))
	if err != nil {
		return nil, err
	}
	var s clusterState
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("reading %s: %w", l.state(name), err)
	}
	return &s, nil
}

// write replaces the state file atomically, so readers never see half a file.
func (l layout) write(s *clusterState) error {
	s.Updated = time.Now()
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp := l.state(s.Name) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, l.state(s.Name))
}

// names lists the clusters that have a state file, sorted.
func (l layout) names() []string {
	files, _ := filepath.Glob(filepath.Join(l.dir, "*.state.json"))
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".state.json"))
	}
	sort.Strings(names)
	return names
}

// ownerAlive tells whether the state's owner process is still our
// `playground serve` for that cluster: PIDs get reused, and we must never
// signal a process we did not start.
func ownerAlive(s *clusterState) bool {
	if !proc.Alive(s.PID) {
		return false
	}
	return isOwner(proc.Args(s.PID), s.Name)
}

func isOwner(args []string, cluster string) bool {
	return slices.Contains(args, "serve") && slices.Contains(args, "--cluster="+cluster)
}

// ownerGone tells whether the state's owner process is gone: dead, or its
// PID reused by another program. Unlike !ownerAlive, a live process whose
// command line reads empty is not gone: a child just spawned shows one for
// a moment, while the kernel is still loading the program (its parent
// resumes before the new command line is in place), and `up` looks at once.
func ownerGone(s *clusterState) bool {
	if !proc.Alive(s.PID) {
		return true
	}
	args := proc.Args(s.PID)
	return len(args) > 0 && !isOwner(args, s.Name)
}

// defaultDir is $LIQO_PLAYGROUND_DIR, else ~/.liqo/playground.
func defaultDir() string {
	if d := os.Getenv("LIQO_PLAYGROUND_DIR"); d != "" {
		return d
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(os.TempDir(), "liqo-playground")
	}
	return filepath.Join(home, ".liqo", "playground")
}
