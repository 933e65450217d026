package gen

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestUpToDate fails when the chart's generated files are not what the
// code generates: run make generate.
func TestUpToDate(t *testing.T) {
	want, err := Webhooks()
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join("..", WebhooksFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale: run make generate", WebhooksFile)
	}
}
