// Command gendocs writes liqoctl's command reference into docs/liqoctl
// (make docs).
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/liqo-go/liqo/pkg/liqoctl/docs"
)

func main() {
	dir := "docs/liqoctl"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	// Pages of commands that are gone must not linger.
	old, _ := filepath.Glob(filepath.Join(dir, "*.md"))
	for _, f := range old {
		_ = os.Remove(f)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := docs.Generate(dir); err != nil {
		fmt.Fprintln(os.Stderr, "generating the liqoctl reference:", err)
		os.Exit(1)
	}
	fmt.Println("wrote the liqoctl reference into", dir)
}
