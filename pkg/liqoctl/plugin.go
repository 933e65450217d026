package liqoctl

import (
	"path/filepath"
	"regexp"
	"strings"

	"github.com/spf13/cobra"
)

// kubectl finds its plugins by file name: kubectl-liqo is run for
// "kubectl liqo ...", and kubectl_complete-liqo, if present, to complete
// "kubectl liqo <Tab>" (it answers as cobra's hidden __complete command).
const (
	pluginPrefix     = "kubectl-"
	completionPrefix = "kubectl_complete-"
)

// Invocation returns the name liqoctl goes by and the arguments to run,
// from the process's argv: "kubectl liqo" when installed as the kubectl
// plugin kubectl-liqo (or kubectl_complete-liqo, which completes, so that
// one binary linked under both names is the plugin and its completion),
// liqoctl otherwise.
func Invocation(argv []string) (name string, args []string) {
	if len(argv) == 0 {
		return Name, nil
	}
	args = argv[1:]
	base := strings.TrimSuffix(filepath.Base(argv[0]), ".exe")
	switch {
	case strings.HasPrefix(base, completionPrefix):
		args = append([]string{cobra.ShellCompRequestCmd}, args...)
		return pluginName(strings.TrimPrefix(base, completionPrefix)), args
	case strings.HasPrefix(base, pluginPrefix):
		return pluginName(strings.TrimPrefix(base, pluginPrefix)), args
	}
	return Name, args
}

// pluginName is how kubectl users call the plugin of file name
// kubectl-<plugin>: dashes separate words, underscores stand for dashes.
func pluginName(plugin string) string {
	return "kubectl " + strings.ReplaceAll(strings.ReplaceAll(plugin, "-", " "), "_", "-")
}

// exampleCommand is liqoctl at the start of an example line.
var exampleCommand = regexp.MustCompile(`(?m)^(\s*)` + Name + `\b`)

// rename names the tree rooted at root name: the usage lines and command
// paths through cobra's display name, and the examples.
func rename(root *cobra.Command, name string) {
	if root.Annotations == nil {
		root.Annotations = map[string]string{}
	}
	root.Annotations[cobra.CommandDisplayNameAnnotation] = name
	root.Use = name[strings.LastIndex(name, " ")+1:]
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Example = exampleCommand.ReplaceAllString(c.Example, "${1}"+name)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}
