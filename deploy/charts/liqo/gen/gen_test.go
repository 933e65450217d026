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
	values, err := os.ReadFile(filepath.Join("..", "values.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if want, err = ValuesSchema(values); err != nil {
		t.Fatal(err)
	}
	if got, err = os.ReadFile(filepath.Join("..", SchemaFile)); err != nil || !bytes.Equal(got, want) {
		t.Errorf("%s is stale (%v): run make generate", SchemaFile, err)
	}
	mcs, err := MCSCRDs()
	if err != nil {
		t.Fatal(err)
	}
	for file, want := range mcs {
		if got, err = os.ReadFile(filepath.Join("..", file)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is stale (%v): run make generate", file, err)
		}
	}
}

func TestValuesReference(t *testing.T) {
	got, err := ValuesReference([]byte(`# -- top doc
a: 1
b:
  # -- nested doc
  # goes on
  c: "x"
  # -- a map
  d: {}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := "| value | default | description |\n|---|---|---|\n| `a` | `1` | top doc |\n| `b.c` | `\"x\"` | nested doc goes on |\n| `b.d` | `{}` | a map |\n"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if _, err := ValuesReference([]byte("a: 1\n")); err == nil {
		t.Errorf("a value without a comment was accepted")
	}
}

// TestValuesPageUpToDate fails when the values reference of the
// documentation (docs/helm-values.md) is not the chart's: run make generate.
func TestValuesPageUpToDate(t *testing.T) {
	path := filepath.Join("..", "..", "..", "..", filepath.FromSlash(ValuesPage))
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := WithValues(page, "..")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(page, want) {
		t.Errorf("the chart values reference in %s is stale: run make generate", ValuesPage)
	}
}
