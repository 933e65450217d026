package liqoctl

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// badValueTypes are the flag types whose value is parsed, and that refuse
// "not-a-value": bool, numbers, durations and -o's formats.
var badValueTypes = map[string]bool{
	"bool": true, "int": true, "int32": true, "int64": true, "uint": true, "uint16": true, "uint32": true,
	"float64": true, "duration": true, "format": true,
}

// outputFileFlags are the commands whose -o/--output is not a format but
// the file to write to: generate peering-user writes a kubeconfig there.
var outputFileFlags = map[string]bool{"liqoctl generate peering-user": true}

// TestCommandTable is issue 17's acceptance table over every command of
// the tree, groups included, each run through Run for its real exit code:
// --help prints an Example; an unknown flag and a flag given a bad value
// exit with ExitUsage and name the flag; a -o takes kubectl's formats (the
// output package's flag), refuses others with ExitUsage, and accepts json.
// That -o json prints JSON, and --get a field, is checked against real
// clusters in test/peering (TestManualPeering), where the commands have
// something to print.
func TestCommandTable(t *testing.T) {
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		// A command that hands its arguments to another program parses
		// none (liqoctl playground: its own test checks what it hands on).
		if c.Hidden || c.Name() == "help" || c.DisableFlagParsing {
			return
		}
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(NewRootCommand())
	if len(cmds) < 40 {
		t.Fatalf("walked %d commands, expected the whole tree", len(cmds))
	}
	run := func(t *testing.T, args ...string) (int, string, string) {
		t.Helper()
		var out, errOut bytes.Buffer
		code := Run(context.Background(), args, &out, &errOut)
		return code, out.String(), errOut.String()
	}
	withOutput := 0
	for _, c := range cmds {
		path := strings.Fields(c.CommandPath())[1:]
		t.Run(c.CommandPath(), func(t *testing.T) {
			code, out, errOut := run(t, append(path, "--help")...)
			if code != 0 || !strings.Contains(out, "\nExamples:\n") || !strings.Contains(out, strings.TrimSpace(c.Example)) {
				t.Errorf("--help: exit %d, no example (stderr %q):\n%s", code, errOut, out)
			}

			code, _, errOut = run(t, append(path, "--no-such-flag")...)
			if code != ExitUsage || !strings.Contains(errOut, "unknown flag: --no-such-flag") {
				t.Errorf("an unknown flag: exit %d, stderr %q: want %d and the flag named", code, errOut, ExitUsage)
			}

			// cobra adds --help when the command runs: it is the flag with
			// a parsed value every command has.
			c.InitDefaultHelpFlag()
			checked := 0
			c.Flags().VisitAll(func(f *pflag.Flag) {
				if !badValueTypes[f.Value.Type()] {
					return
				}
				checked++
				code, _, errOut := run(t, append(path, "--"+f.Name+"=not-a-value")...)
				if code != ExitUsage || !strings.Contains(errOut, `invalid argument "not-a-value" for "`) || !strings.Contains(errOut, "--"+f.Name) {
					t.Errorf("--%s=not-a-value: exit %d, stderr %q: want %d and the flag named", f.Name, code, errOut, ExitUsage)
				}
			})
			if checked == 0 {
				t.Errorf("no flag with a parsed value to give a bad one")
			}

			o := c.Flags().Lookup("output")
			if o == nil || outputFileFlags[c.CommandPath()] {
				return
			}
			withOutput++
			if o.Shorthand != "o" || o.Value.Type() != "format" {
				t.Fatalf("-o/--output is not the output package's flag (shorthand %q, type %s)", o.Shorthand, o.Value.Type())
			}
			code, _, errOut = run(t, append(path, "-o", "xml")...)
			if code != ExitUsage || !strings.Contains(errOut, `invalid argument "xml" for "-o, --output" flag`) || !strings.Contains(errOut, "json") {
				t.Errorf("-o xml: exit %d, stderr %q: want %d, -o named and its formats", code, errOut, ExitUsage)
			}
			fresh, rest, err := NewRootCommand().Find(append(path, "-o", "json"))
			if err == nil {
				err = fresh.ParseFlags(rest)
			}
			if err != nil {
				t.Errorf("-o json: %v", err)
			}
		})
	}
	if withOutput < 7 {
		t.Errorf("%d commands have -o, expected at least info, info peer, version, offload namespace, create resourceslice, create virtualnode, generate tenant, generate identity", withOutput)
	}
}

// TestOutputJSONWithoutCluster: the commands whose -o needs no cluster
// print JSON here (those that read one: test/peering TestManualPeering).
func TestOutputJSONWithoutCluster(t *testing.T) {
	t.Setenv("KUBECONFIG", "")
	t.Setenv("HOME", t.TempDir())
	for _, args := range [][]string{
		{"version", "--client", "-o", "json"},
		{"offload", "namespace", "foo", "-o", "json"},
	} {
		var out, errOut bytes.Buffer
		if code := Run(context.Background(), args, &out, &errOut); code != 0 {
			t.Fatalf("liqoctl %s: exit %d: %s", strings.Join(args, " "), code, errOut.String())
		}
		if err := jsonObject(out.String()); err != nil {
			t.Errorf("liqoctl %s: %v\n%s", strings.Join(args, " "), err, out.String())
		}
	}
}

// jsonObject checks that s is one JSON object with fields.
func jsonObject(s string) error {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return err
	}
	if len(m) == 0 {
		return errors.New("an empty JSON object")
	}
	return nil
}
