package rbac_test

import (
	"bytes"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository, from this package's directory.
const root = "../../../../.."

// makeVar reads a variable of the Makefile, where make generate takes its
// pins and paths from.
func makeVar(t *testing.T, name string) string {
	t.Helper()
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^` + name + `\s*:=\s*(.+)$`).FindSubmatch(makefile)
	if m == nil {
		t.Fatalf("no %s in the Makefile", name)
	}
	return strings.TrimSpace(string(m[1]))
}

// peeringRoles maps each peering ClusterRole to its package under pkg/rbac.
func peeringRoles(t *testing.T) map[string]string {
	out := map[string]string{}
	for _, r := range strings.Fields(makeVar(t, "PEERING_RBAC")) {
		name, pkg, ok := strings.Cut(r, "=")
		if !ok {
			t.Fatalf("PEERING_RBAC entry %q is not name=package", r)
		}
		out[name] = pkg
	}
	return out
}

// TestGeneratedUpToDate regenerates every ClusterRole with the
// controller-gen pinned in the Makefile and compares it with the committed
// file, so that a marker edited without make generate fails here rather
// than as a Forbidden in a cluster.
func TestGeneratedUpToDate(t *testing.T) {
	gen := makeVar(t, "CONTROLLER_GEN")
	roles := map[string]string{"liqo-controller-manager": makeVar(t, "MANAGER_RBAC")}
	for name, pkg := range peeringRoles(t) {
		roles[name] = "./pkg/rbac/" + pkg
	}
	committed, _ := filepath.Glob("*.yaml")
	if len(committed) != len(roles) {
		t.Errorf("%d ClusterRoles are committed, make generate writes %d: %v", len(committed), len(roles), committed)
	}
	for name, paths := range roles {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			cmd := exec.Command("go", "run", gen, "rbac:roleName="+name, "paths="+paths, "output:rbac:stdout")
			cmd.Dir = root
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			fresh, err := cmd.Output()
			if err != nil {
				t.Fatalf("controller-gen: %v\n%s", err, stderr.Bytes())
			}
			got, err := os.ReadFile(name + ".yaml")
			if err != nil || !bytes.Equal(got, fresh) {
				t.Errorf("%s.yaml is stale (%v): run make generate", name, err)
			}
		})
	}
}

// TestMarkersReachGeneration checks that every package with RBAC markers
// is one make generate reads: the manager's own under MANAGER_RBAC, and
// each peering role's package in PEERING_RBAC. A marker elsewhere would be
// silently left out of the chart.
func TestMarkersReachGeneration(t *testing.T) {
	var roots []string
	for _, p := range strings.Split(makeVar(t, "MANAGER_RBAC"), ";") {
		roots = append(roots, filepath.Clean(strings.TrimSuffix(p, "/...")))
	}
	peering := map[string]bool{}
	for _, pkg := range peeringRoles(t) {
		peering[filepath.Join("pkg", "rbac", pkg)] = true
	}
	seen := map[string]bool{}
	err := filepath.WalkDir(filepath.Join(root, "pkg"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil || !bytes.Contains(data, []byte("+kubebuilder:rbac:")) {
			return err
		}
		dir, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		if seen[dir] {
			return nil
		}
		seen[dir] = true
		switch {
		case under(dir, filepath.Join("pkg", "rbac")):
			if !peering[dir] {
				t.Errorf("%s has RBAC markers but is not in the Makefile's PEERING_RBAC", dir)
			}
		case !slices.ContainsFunc(roots, func(r string) bool { return under(dir, r) }):
			t.Errorf("%s has RBAC markers but is not under the Makefile's MANAGER_RBAC (%v)", dir, roots)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for dir := range peering {
		if !seen[dir] {
			t.Errorf("PEERING_RBAC names %s, which has no RBAC markers", dir)
		}
	}
}

// under tells whether dir is root or inside it.
func under(dir, root string) bool {
	return dir == root || strings.HasPrefix(dir, root+string(filepath.Separator))
}
