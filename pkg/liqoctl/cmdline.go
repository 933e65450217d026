package liqoctl

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// CommandLines returns the command lines of a shell snippet (a command's
// examples, a code block of the documentation): continuation lines joined,
// comments, pipes and redirections dropped, and leading environment
// assignments (NAME=value) removed.
func CommandLines(script string) []string {
	var out []string
	cur := ""
	for line := range strings.Lines(script) {
		line = strings.TrimSpace(line)
		if cont, ok := strings.CutSuffix(line, `\`); ok {
			cur += cont + " "
			continue
		}
		line = cur + line
		cur = ""
		if strings.HasPrefix(line, "#") {
			continue
		}
		for _, cut := range []string{" #", " |", " >"} {
			line, _, _ = strings.Cut(line, cut)
		}
		for strings.Contains(strings.SplitN(line, " ", 2)[0], "=") {
			_, line, _ = strings.Cut(line, " ")
		}
		if line = strings.TrimSpace(line); line != "" {
			out = append(out, line)
		}
	}
	return out
}

// ShellWords splits a command line as a shell does for plain words and
// single- or double-quoted ones (nothing is expanded: "$(cat f)" stays one
// word as written).
func ShellWords(line string) []string {
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

// CheckArgs checks liqoctl's arguments (without the program's name) as
// Execute does before running a command, and runs nothing: in a fresh
// command tree (parsing sets the flags), it finds the command, parses its
// flags and checks its arguments, required flags and flag groups. It
// returns the command found, and an error naming what is wrong, also when
// the command only holds subcommands.
func CheckArgs(args []string) (*cobra.Command, error) {
	return CheckArgsOf(NewRootCommand(), args)
}

// CheckArgsOf is CheckArgs for the command tree rooted at root, a fresh
// one: another program's, such as liqo-playground's, which liqoctl
// playground runs.
func CheckArgsOf(root *cobra.Command, args []string) (*cobra.Command, error) {
	cmd, rest, err := root.Find(args)
	if err != nil {
		return cmd, err
	}
	if err := cmd.ParseFlags(rest); err != nil {
		return cmd, err
	}
	if err := cmd.ValidateArgs(cmd.Flags().Args()); err != nil {
		return cmd, err
	}
	if err := cmd.ValidateRequiredFlags(); err != nil {
		return cmd, err
	}
	if err := cmd.ValidateFlagGroups(); err != nil {
		return cmd, err
	}
	if !cmd.Runnable() {
		return cmd, fmt.Errorf("%s only holds subcommands", cmd.CommandPath())
	}
	return cmd, nil
}
