package playground

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"

	"github.com/spf13/cobra"
)

// Binary is the program liqoctl playground runs.
const Binary = "liqo-playground"

// NewCommand returns `liqoctl playground`, which hands its arguments,
// flags and help requests included, to liqo-playground.
func NewCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "playground [up|down|status|build] [flags]",
		Short: "Run local Kubernetes clusters to try liqo on (runs liqo-playground)",
		Long: `Run local Kubernetes clusters to try liqo on: liqoctl playground runs the
liqo-playground binary with the same arguments, looked for next to liqoctl,
then on PATH. make liqoctl builds both into bin/. The playground runs on
Linux; 'liqoctl playground --help' shows its own help.`,
		Example: `  liqoctl playground up
  liqoctl playground status
  liqoctl playground down`,
		// Every argument, --help included, is liqo-playground's.
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			bin, err := find()
			if err != nil {
				return err
			}
			c := exec.CommandContext(cmd.Context(), bin, args...)
			c.Stdin, c.Stdout, c.Stderr = cmd.InOrStdin(), cmd.OutOrStdout(), cmd.ErrOrStderr()
			err = c.Run()
			var exit *exec.ExitError
			if errors.As(err, &exit) && exit.ExitCode() > 0 {
				return ExitStatus(exit.ExitCode())
			}
			return err
		},
	}
}

// ExitStatus is liqo-playground's exit status when it failed: it printed
// its own error, and liqoctl exits with the same status, adding nothing.
type ExitStatus int

func (s ExitStatus) Error() string { return fmt.Sprintf("%s exited with status %d", Binary, int(s)) }

// find looks for liqo-playground next to this liqoctl (where make liqoctl
// puts both), then on PATH.
func find() (string, error) {
	name := Binary
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	var next string
	if self, err := os.Executable(); err == nil {
		next = filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(next); err == nil && !st.IsDir() {
			return next, nil
		}
	}
	bin, err := exec.LookPath(Binary)
	if err == nil {
		return bin, nil
	}
	if !errors.Is(err, exec.ErrNotFound) {
		return "", fmt.Errorf("looking for %s on PATH: %w", Binary, err)
	}
	return "", fmt.Errorf("liqoctl playground runs the %s binary, which is neither next to liqoctl (%s) nor on PATH: "+
		"build it with `make liqoctl` (into bin/, beside liqoctl) or `go build -o DIR ./cmd/%s` into a directory on PATH", Binary, next, Binary)
}
