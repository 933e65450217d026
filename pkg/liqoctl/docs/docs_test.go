package docs

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestDocsUpToDate: docs/liqoctl is what Generate writes for the
// commands as they are: a page per command, none missing, none left over,
// each identical. Run `make docs` after changing a command.
func TestDocsUpToDate(t *testing.T) {
	t.Setenv("LIQO_PLAYGROUND_DIR", "")
	want := t.TempDir()
	if err := Generate(want); err != nil {
		t.Fatal(err)
	}
	committed := filepath.Join("..", "..", "..", "docs", "liqoctl")
	list := func(dir string) []string {
		files, err := filepath.Glob(filepath.Join(dir, "*.md"))
		if err != nil {
			t.Fatal(err)
		}
		for i := range files {
			files[i] = filepath.Base(files[i])
		}
		slices.Sort(files)
		return files
	}
	wantFiles, haveFiles := list(want), list(committed)
	if !slices.Equal(wantFiles, haveFiles) {
		t.Fatalf("docs/liqoctl holds %v, the commands give %v: run make docs", haveFiles, wantFiles)
	}
	for _, f := range wantFiles {
		w, err := os.ReadFile(filepath.Join(want, f))
		if err != nil {
			t.Fatal(err)
		}
		h, err := os.ReadFile(filepath.Join(committed, f))
		if err != nil {
			t.Fatal(err)
		}
		if string(w) != string(h) {
			t.Errorf("docs/liqoctl/%s is out of date: run make docs", f)
		}
	}
}
