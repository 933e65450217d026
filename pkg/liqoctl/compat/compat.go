// Package compat holds the reference system's flags that have no meaning
// here: each is accepted, so that scripts written for the reference parse,
// and either ignored with a warning (it would change nothing here) or
// refused with the reason and what to use instead (it would change what the
// command does). Its help says which, and why.
package compat

import (
	"fmt"
	"io"

	"github.com/spf13/pflag"
)

const (
	ignoredKey = "liqoctl.compat/ignored"
	refusedKey = "liqoctl.compat/refused"
)

// Ignore marks fs's flag name as accepted and ignored: given, the run
// prints a warning with why (the flag would change nothing here).
func Ignore(fs *pflag.FlagSet, name, why string) {
	mark(fs, name, ignoredKey, why, "accepted for compatibility and ignored, with a warning: ")
}

// Refuse marks fs's flag name as accepted by the parser but refused: given
// a value other than its default, the run fails with why, which says what
// to use instead.
func Refuse(fs *pflag.FlagSet, name, why string) {
	mark(fs, name, refusedKey, why, "accepted for compatibility, and refused: ")
}

func mark(fs *pflag.FlagSet, name, key, why, prefix string) {
	f := fs.Lookup(name)
	if f == nil {
		panic("compat: no flag --" + name)
	}
	if f.Annotations == nil {
		f.Annotations = map[string][]string{}
	}
	f.Annotations[key] = []string{why}
	f.Usage = prefix + why
}

// Check warns on w, for the command named path, about each ignored flag fs
// was given, and returns the reason of the first refused flag given a value
// other than its default.
func Check(fs *pflag.FlagSet, w io.Writer, path string) error {
	var refused error
	fs.Visit(func(f *pflag.Flag) {
		if why, ok := f.Annotations[ignoredKey]; ok {
			fmt.Fprintf(w, "WARN: --%s is accepted and ignored by %s: %s\n", f.Name, path, why[0])
		}
		if why, ok := f.Annotations[refusedKey]; ok && refused == nil && f.Value.String() != f.DefValue {
			refused = fmt.Errorf("--%s is not supported by %s: %s", f.Name, path, why[0])
		}
	})
	return refused
}
