package liqoctl

import (
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// TestEveryCommandExplained: every command of the tree, groups included,
// has a long description and examples for its --help, and every example
// that runs liqoctl names an existing command with flags it has.
func TestEveryCommandExplained(t *testing.T) {
	var walk func(c *cobra.Command)
	n := 0
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		n++
		if strings.TrimSpace(c.Long) == "" {
			t.Errorf("%s has no Long description", c.CommandPath())
		}
		if strings.TrimSpace(c.Example) == "" {
			t.Errorf("%s has no Example", c.CommandPath())
		}
		for _, line := range CommandLines(c.Example) {
			args := ShellWords(line)
			if len(args) == 0 || args[0] != Name {
				continue
			}
			// A fresh tree for each line: parsing sets the flags.
			cmd, rest, err := NewRootCommand().Find(args[1:])
			if err == nil {
				err = cmd.ParseFlags(rest)
			}
			if err != nil {
				t.Errorf("%s: example %q: %v", c.CommandPath(), line, err)
			}
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCommand())
	if n < 30 {
		t.Errorf("walked %d commands, expected the whole tree", n)
	}
}
