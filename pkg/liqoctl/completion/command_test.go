package completion_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/liqo-go/liqo/pkg/liqoctl"
	"github.com/liqo-go/liqo/pkg/liqoctl/completion"
)

// TestCompletionScripts: each shell's script is what that shell loads,
// for the whole liqoctl tree.
func TestCompletionScripts(t *testing.T) {
	first := map[string]string{
		"bash":       "# bash completion V2 for liqoctl",
		"zsh":        "#compdef liqoctl",
		"fish":       "# fish completion for liqoctl",
		"powershell": "# powershell completion for liqoctl",
	}
	// Where each script hooks liqoctl into the shell.
	register := map[string]string{
		"bash":       "-F __start_liqoctl liqoctl",
		"zsh":        "compdef _liqoctl liqoctl",
		"fish":       "complete -c liqoctl ",
		"powershell": "Register-ArgumentCompleter -CommandName 'liqoctl'",
	}
	// Every script calls back into liqoctl for the candidates.
	const callback = " __complete "
	if len(completion.Shells()) != len(first) {
		t.Fatalf("Shells() = %v, the test knows %d", completion.Shells(), len(first))
	}
	for _, shell := range completion.Shells() {
		t.Run(shell, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := liqoctl.Run(t.Context(), []string{"completion", shell}, &out, &errOut)
			if code != 0 || errOut.Len() != 0 {
				t.Fatalf("exit %d, stderr %q", code, errOut.String())
			}
			script := out.String()
			if !strings.HasPrefix(script, first[shell]) || !strings.Contains(script, register[shell]) || !strings.Contains(script, callback) {
				t.Errorf("the %s script (%d bytes) starts %q: want %q, %q and a call to %q",
					shell, len(script), head(script), first[shell], register[shell], callback)
			}
		})
	}
}

func head(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestCompletionUsageErrors: an unknown shell, none or two are usage
// errors (exit 2) that list the shells.
func TestCompletionUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"tcsh"}, `unsupported shell "tcsh": choose one of bash, zsh, fish, powershell`},
		{nil, "expected one shell (bash, zsh, fish, powershell), got 0 arguments"},
		{[]string{"bash", "zsh"}, "expected one shell (bash, zsh, fish, powershell), got 2 arguments"},
	} {
		var out, errOut bytes.Buffer
		code := liqoctl.Run(t.Context(), append([]string{"completion"}, tc.args...), &out, &errOut)
		if code != liqoctl.ExitUsage || out.Len() != 0 ||
			!strings.Contains(errOut.String(), tc.want) || !strings.Contains(errOut.String(), "liqoctl completion --help") {
			t.Errorf("completion %v: exit %d, stdout %q, stderr %q: want %d, nothing printed and %q",
				tc.args, code, out.String(), errOut.String(), liqoctl.ExitUsage, tc.want)
		}
	}
}

// TestOneCompletionCommand: cobra adds no completion command of its own
// next to liqoctl's, and the shell names complete.
func TestOneCompletionCommand(t *testing.T) {
	root := liqoctl.NewRootCommand()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"__complete", "completion", ""})
	if err := root.ExecuteContext(t.Context()); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d completion commands, want 1", n)
	}
	for _, shell := range completion.Shells() {
		if !strings.Contains(out.String(), shell+"\n") {
			t.Errorf("completing `liqoctl completion ` gives %q: want %s among the candidates", out.String(), shell)
		}
	}
}

// TestHelpExplainsLoading: the help says how to load the script in every
// shell.
func TestHelpExplainsLoading(t *testing.T) {
	out, err := liqoctl.Execute(t.Context(), "completion", "--help")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"source <(liqoctl completion bash)",
		"source <(liqoctl completion zsh)",
		"liqoctl completion fish | source",
		"liqoctl completion powershell | Out-String | Invoke-Expression",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("completion --help does not say %q", want)
		}
	}
}
