package output

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
)

// command returns a command with f's flags that prints obj (or, with
// document, prints it as a document) with them.
func command(f *Flags, obj any, document bool) (*cobra.Command, *strings.Builder) {
	var out strings.Builder
	cmd := &cobra.Command{Use: "x", SilenceUsage: true, SilenceErrors: true, RunE: func(*cobra.Command, []string) error {
		if !f.Requested() {
			out.WriteString("not printed")
			return nil
		}
		if document {
			return f.PrintDocument(&out, obj)
		}
		return f.PrintObject(&out, obj.(*offv1beta1.VirtualNode))
	}}
	f.AddFlags(cmd, "print it")
	cmd.SetOut(&out)
	return cmd, &out
}

// served is a VirtualNode as read from an API server, with what it sets
// and a status; its apiVersion and kind unset, as a typed client leaves
// them.
func served() *offv1beta1.VirtualNode {
	return &offv1beta1.VirtualNode{
		ObjectMeta: metav1.ObjectMeta{Name: "milan", Namespace: "liqo-tenant-milan", UID: types.UID("1234"), ResourceVersion: "42",
			Generation: 3, CreationTimestamp: metav1.Now(), Labels: map[string]string{"a": "b"},
			ManagedFields: []metav1.ManagedFieldsEntry{{Manager: "liqoctl"}}},
		Spec:   offv1beta1.VirtualNodeSpec{ClusterID: "milan", Labels: map[string]string{"tier": "small"}},
		Status: offv1beta1.VirtualNodeStatus{Conditions: []offv1beta1.VirtualNodeCondition{{Type: offv1beta1.NodeCondition, Status: offv1beta1.RunningVirtualNodeStatus}}},
	}
}

// TestPrintObject: each format of kubectl's prints the manifest to apply
// elsewhere: apiVersion and kind filled in, no status, nothing the API
// server set.
func TestPrintObject(t *testing.T) {
	for _, tc := range []struct {
		format string
		check  func(t *testing.T, out string)
	}{
		{"json", func(t *testing.T, out string) {
			var m map[string]any
			if err := json.Unmarshal([]byte(out), &m); err != nil {
				t.Fatalf("not JSON: %v", err)
			}
			clean(t, m)
		}},
		{"yaml", func(t *testing.T, out string) {
			var m map[string]any
			if err := yaml.Unmarshal([]byte(out), &m); err != nil {
				t.Fatalf("not YAML: %v", err)
			}
			clean(t, m)
		}},
		{"name", func(t *testing.T, out string) {
			if out != "virtualnode.offloading.liqo.io/milan\n" {
				t.Errorf("want virtualnode.offloading.liqo.io/milan")
			}
		}},
		{"jsonpath={.kind} {.spec.clusterID} {.metadata.uid}", func(t *testing.T, out string) {
			if out != "VirtualNode milan " {
				t.Errorf("want the kind, the cluster ID and no uid")
			}
		}},
		{"jsonpath-as-json={.spec.labels}", func(t *testing.T, out string) {
			var got []map[string]string
			if err := json.Unmarshal([]byte(out), &got); err != nil || len(got) != 1 || got[0]["tier"] != "small" {
				t.Errorf("want [{tier: small}] (%v)", err)
			}
		}},
		{"go-template={{.metadata.name}}/{{.spec.clusterID}}", func(t *testing.T, out string) {
			if out != "milan/milan" {
				t.Errorf("want milan/milan")
			}
		}},
	} {
		t.Run(tc.format, func(t *testing.T) {
			cmd, out := command(NewObjectFlags(""), served(), false)
			cmd.SetArgs([]string{"-o", tc.format})
			if err := cmd.Execute(); err != nil {
				t.Fatal(err)
			}
			t.Logf("-o %s:\n%s", tc.format, out)
			tc.check(t, out.String())
		})
	}
}

func clean(t *testing.T, m map[string]any) {
	t.Helper()
	if m["apiVersion"] != "offloading.liqo.io/v1beta1" || m["kind"] != "VirtualNode" {
		t.Errorf("apiVersion %v, kind %v", m["apiVersion"], m["kind"])
	}
	if _, ok := m["status"]; ok {
		t.Error("the manifest has the status")
	}
	meta, _ := m["metadata"].(map[string]any)
	for _, k := range []string{"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields"} {
		if _, ok := meta[k]; ok {
			t.Errorf("the manifest has metadata.%s", k)
		}
	}
	if meta["name"] != "milan" || meta["namespace"] != "liqo-tenant-milan" || meta["labels"].(map[string]any)["a"] != "b" {
		t.Errorf("metadata %v: want the name, namespace and labels kept", meta)
	}
}

// TestDefaultAndTemplate: without -o a command prints in its default
// format, or nothing; --template alone is a go-template, as in kubectl.
func TestDefaultAndTemplate(t *testing.T) {
	cmd, out := command(NewObjectFlags(""), served(), false)
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil || out.String() != "not printed" {
		t.Errorf("no -o and no default: %v %q", err, out)
	}
	cmd, out = command(NewObjectFlags("yaml"), served(), false)
	cmd.SetArgs(nil)
	if err := cmd.Execute(); err != nil || !strings.HasPrefix(out.String(), "apiVersion: offloading.liqo.io/v1beta1\n") {
		t.Errorf("default yaml: %v %q", err, out)
	}
	cmd, out = command(NewObjectFlags(""), served(), false)
	cmd.SetArgs([]string{"--template", "{{.kind}}"})
	if err := cmd.Execute(); err != nil || out.String() != "VirtualNode" {
		t.Errorf("--template: %v %q", err, out)
	}
}

// TestPrintDocument: a document that is no Kubernetes object prints in
// every format but name.
func TestPrintDocument(t *testing.T) {
	doc := map[string]any{"local": map[string]string{"clusterID": "rome"}}
	for format, want := range map[string]string{
		"json":                             "{\n    \"local\": {\n        \"clusterID\": \"rome\"\n    }\n}\n",
		"yaml":                             "local:\n  clusterID: rome\n",
		"jsonpath={.local.clusterID}":      "rome",
		"go-template={{.local.clusterID}}": "rome",
	} {
		cmd, out := command(NewDocumentFlags(), doc, true)
		cmd.SetArgs([]string{"-o", format})
		if err := cmd.Execute(); err != nil || out.String() != want {
			t.Errorf("-o %s: %v %q, want %q", format, err, out, want)
		}
	}
}

// TestBadFormat: a format -o does not take is refused as the flags are
// parsed, naming the flag and the formats; so is a template that does not
// parse.
func TestBadFormat(t *testing.T) {
	for _, tc := range []struct {
		flags  *Flags
		format string
		want   []string
	}{
		{NewObjectFlags(""), "xml", []string{`invalid argument "xml" for "-o, --output" flag`, "json", "yaml", "name", "jsonpath="}},
		{NewDocumentFlags(), "name", []string{`invalid argument "name" for "-o, --output" flag`, "json"}},
		{NewObjectFlags(""), "jsonpath={.spec", []string{`"-o, --output" flag`, "unclosed action"}},
		{NewObjectFlags(""), "jsonpath=", []string{`"-o, --output" flag`, "needs a template"}},
		{NewObjectFlags(""), "go-template={{.x", []string{`"-o, --output" flag`, "unclosed action"}},
	} {
		cmd, _ := command(tc.flags, served(), false)
		cmd.SetArgs([]string{"-o", tc.format})
		err := cmd.Execute()
		if err == nil {
			t.Errorf("-o %s: no error", tc.format)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("-o %s: %q lacks %q", tc.format, err, w)
			}
		}
	}
}

// TestTable: kubectl's look: upper-case headers, three spaces between
// columns; nothing without rows.
func TestTable(t *testing.T) {
	var b strings.Builder
	if err := Table(&b, []string{"name", "api server"}, [][]string{{"rome", "https://127.0.0.1:6443"}, {"milan-long", ""}}); err != nil {
		t.Fatal(err)
	}
	want := "NAME         API SERVER\nrome         https://127.0.0.1:6443\nmilan-long   \n"
	if b.String() != want {
		t.Errorf("table:\n%q\nwant:\n%q", b.String(), want)
	}
	b.Reset()
	if err := Table(&b, []string{"name"}, nil); err != nil || b.String() != "" {
		t.Errorf("no rows: %v %q", err, b.String())
	}
}
