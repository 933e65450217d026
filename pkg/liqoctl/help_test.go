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
		for _, line := range exampleCommands(c.Example) {
			args := shellWords(line)
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

// exampleCommands returns the command lines of an Example: continuation
// lines joined, environment assignments, comments, pipes and redirections
// dropped.
func exampleCommands(example string) []string {
	var out []string
	cur := ""
	for line := range strings.Lines(example) {
		line = strings.TrimSpace(line)
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur += cont + " "
			continue
		}
		line = cur + line
		cur = ""
		for _, cut := range []string{" #", " |", " >"} {
			line, _, _ = strings.Cut(line, cut)
		}
		for strings.Contains(strings.SplitN(line, " ", 2)[0], "=") {
			_, line, _ = strings.Cut(line, " ")
		}
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

// shellWords splits a command line as a shell does for plain words and
// single- or double-quoted ones.
func shellWords(line string) []string {
	var words []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range line {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
