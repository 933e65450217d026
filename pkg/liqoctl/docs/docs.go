// Package docs generates liqoctl's command reference (make docs). It is
// apart from the command tree so that the liqoctl binary does not carry
// the generator.
package docs

import (
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"

	"github.com/liqo-go/liqo/pkg/liqoctl"
)

// Generate writes the command reference, one Markdown page per
// command, into dir: what `make docs` keeps in docs/liqoctl, and a test
// checks is up to date.
func Generate(dir string) error {
	root := liqoctl.NewRootCommand()
	// No generation date: the pages change only when the commands do.
	root.DisableAutoGenTag = true
	portableDefaults(root)
	return doc.GenMarkdownTree(root, dir)
}

// portableDefaults shows defaults under the user's home directory as
// $HOME/..., so that the reference is the same on every machine.
func portableDefaults(c *cobra.Command) {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return
	}
	fix := func(f *pflag.Flag) {
		if rest, ok := strings.CutPrefix(f.DefValue, home); ok {
			f.DefValue = "$HOME" + rest
		}
	}
	c.Flags().VisitAll(fix)
	c.PersistentFlags().VisitAll(fix)
	for _, sub := range c.Commands() {
		portableDefaults(sub)
	}
}
