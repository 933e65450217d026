package completion

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/liqo-go/liqo/pkg/liqoctl/compat"
)

// Shells returns the shells liqoctl writes completion scripts for.
func Shells() []string { return []string{"bash", "zsh", "fish", "powershell"} }

// NewCommand returns `liqoctl completion`. It is the only completion
// command: the root disables cobra's default one, so the tree has a single
// place that documents how to load the scripts.
func NewCommand() *cobra.Command {
	var noDescriptions bool
	cmd := &cobra.Command{
		Use:   "completion " + strings.Join(Shells(), "|"),
		Short: "Print the shell completion script for liqoctl",
		Long: `Print a script that makes the shell complete liqoctl's commands, flags and
arguments when you press Tab. Load it in the current shell to try it, or
install it where the shell looks at startup to keep it.

Bash (needs the bash-completion package, version 2):
  # the current shell
  source <(liqoctl completion bash)
  # every new shell
  mkdir -p ~/.local/share/bash-completion/completions
  liqoctl completion bash > ~/.local/share/bash-completion/completions/liqoctl

Zsh (the completion system must be enabled: "autoload -U compinit; compinit"
in ~/.zshrc, before any of the lines below):
  # the current shell
  source <(liqoctl completion zsh)
  # every new shell: a file named _liqoctl in a directory of $fpath
  liqoctl completion zsh > "${fpath[1]}/_liqoctl"

Fish:
  # the current shell
  liqoctl completion fish | source
  # every new shell
  liqoctl completion fish > ~/.config/fish/completions/liqoctl.fish

PowerShell:
  # the current session
  liqoctl completion powershell | Out-String | Invoke-Expression
  # every new session: run the same line from your profile
  Add-Content $PROFILE 'liqoctl completion powershell | Out-String | Invoke-Expression'

Start a new shell after installing a script for it to take effect.

As the kubectl plugin (the binary installed as kubectl-liqo in $PATH, run
as "kubectl liqo ..."), kubectl's own completion (kubectl 1.26 or later)
completes "kubectl liqo" through an executable named kubectl_complete-liqo
in $PATH: link it to the same binary, which answers as the completion then.
  ln -s kubectl-liqo "$(dirname "$(command -v kubectl-liqo)")/kubectl_complete-liqo"`,
		Example: `  liqoctl completion bash
  liqoctl completion zsh > "${fpath[1]}/_liqoctl"`,
		ValidArgs: Shells(),
		Args:      checkShell,
		RunE: func(cmd *cobra.Command, args []string) error {
			return Generate(cmd.Root(), args[0], cmd.OutOrStdout(), !noDescriptions)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&noDescriptions, "no-descriptions", false, "complete without the commands' and flags' descriptions")
	for _, name := range []string{"kubeconfig", "context", "cluster", "user"} {
		fs.String(name, "", "")
		compat.Ignore(fs, name, "the script reaches no cluster; on Tab, liqoctl reads the connection flags of the command line being completed")
	}
	return cmd
}

// checkShell accepts exactly one supported shell.
func checkShell(_ *cobra.Command, args []string) error {
	supported := strings.Join(Shells(), ", ")
	if len(args) != 1 {
		return fmt.Errorf("expected one shell (%s), got %d arguments", supported, len(args))
	}
	if !slices.Contains(Shells(), args[0]) {
		return fmt.Errorf("unsupported shell %q: choose one of %s", args[0], supported)
	}
	return nil
}

// Generate writes root's completion script for shell to w, with the
// commands' and flags' descriptions where the shell shows them if
// descriptions.
func Generate(root *cobra.Command, shell string, w io.Writer, descriptions bool) error {
	switch shell {
	case "bash":
		return root.GenBashCompletionV2(w, descriptions)
	case "zsh":
		if !descriptions {
			return root.GenZshCompletionNoDesc(w)
		}
		return root.GenZshCompletion(w)
	case "fish":
		return root.GenFishCompletion(w, descriptions)
	case "powershell":
		if !descriptions {
			return root.GenPowerShellCompletion(w)
		}
		return root.GenPowerShellCompletionWithDesc(w)
	default:
		return fmt.Errorf("unsupported shell %q: choose one of %s", shell, strings.Join(Shells(), ", "))
	}
}
