// Package completion implements `liqoctl completion SHELL`: the shell
// completion scripts that cobra generates for the whole command tree.
package completion
