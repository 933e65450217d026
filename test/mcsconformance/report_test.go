package mcsconformance

import (
	"os"
	"slices"
	"testing"
)

// The suite's report.yaml (yaml.v3's lower-case keys) is read whole, and a
// test that was not conformant is listed with its group and message.
func TestReadReport(t *testing.T) {
	r, err := ReadReport("testdata/report.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if r.Passed != 1 || r.Total != 2 || r.DNSDomain != "clusterset.local" || len(r.Groups) != 2 {
		t.Fatalf("read %+v", r)
	}
	got := r.NotPassedTests()
	if len(got) != 1 || got[0].Desc != "EndpointSlice managed-by label" || got[0].Message != " - the managed-by label is the EndpointSlice controller's" ||
		!slices.Equal(got[0].Labels, []string{"Optional", "EndpointSlice"}) {
		t.Errorf("NotPassedTests() = %+v, want the Optional EndpointSlice test with its message", got)
	}
}

// Two kubeconfigs naming the same context are refused: the suite would
// reach one cluster twice.
func TestMergeKubeconfigsRefusesDuplicates(t *testing.T) {
	dir := t.TempDir()
	const kc = `apiVersion: v1
kind: Config
clusters: [{name: rome, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: rome-admin, user: {}}]
contexts: [{name: rome, context: {cluster: rome, user: rome-admin}}]
current-context: rome
`
	a, b := dir+"/a", dir+"/b"
	for _, f := range []string{a, b} {
		if err := os.WriteFile(f, []byte(kc), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := MergeKubeconfigs(dir+"/out", a); err != nil {
		t.Fatalf("one kubeconfig: %v", err)
	}
	if err := MergeKubeconfigs(dir+"/out", a, b); err == nil {
		t.Error("two kubeconfigs with context rome merged, want an error")
	}
}
