package compat

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestCheck: an ignored flag given warns, with its reason; a refused flag
// given another value than its default fails, with its reason; neither
// says anything when not given, nor a refused flag given its default.
func TestCheck(t *testing.T) {
	parse := func(args ...string) (string, error) {
		fs := pflag.NewFlagSet("x", pflag.ContinueOnError)
		fs.Bool("quiet", false, "")
		fs.String("template", "wireguard", "")
		Ignore(fs, "quiet", "nothing is printed anyway")
		Refuse(fs, "template", "there are no templates: drop it")
		if err := fs.Parse(args); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(fs.Lookup("template").Usage, "accepted for compatibility, and refused: ") {
			t.Errorf("usage %q", fs.Lookup("template").Usage)
		}
		var w bytes.Buffer
		err := Check(fs, &w, "liqoctl x")
		return w.String(), err
	}
	if out, err := parse(); out != "" || err != nil {
		t.Errorf("nothing given: %q, %v", out, err)
	}
	if out, err := parse("--quiet"); err != nil || out != "WARN: --quiet is accepted and ignored by liqoctl x: nothing is printed anyway\n" {
		t.Errorf("--quiet: %q, %v", out, err)
	}
	if _, err := parse("--template", "wireguard"); err != nil {
		t.Errorf("--template at its default: %v", err)
	}
	if _, err := parse("--template", "other"); err == nil || err.Error() != "--template is not supported by liqoctl x: there are no templates: drop it" {
		t.Errorf("--template other: %v", err)
	}
}
