// Package rbac embeds the ClusterRoles make generate writes from the
// +kubebuilder:rbac markers (controller-gen): the controller manager's own,
// liqo-controller-manager, and those it binds peers and gateways to. The
// chart ships the same files; the controller manager creates the latter
// from here when it runs as a local process.
package rbac

import (
	"embed"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var manifests embed.FS

// ClusterRoles returns every embedded ClusterRole, sorted by name.
func ClusterRoles() ([]*rbacv1.ClusterRole, error) {
	files, err := fs.Glob(manifests, "*.yaml")
	if err != nil {
		return nil, err
	}
	out := make([]*rbacv1.ClusterRole, 0, len(files))
	for _, f := range files {
		r, err := ClusterRole(strings.TrimSuffix(f, ".yaml"))
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	// File names sort "liqo-gateway-nodes.yaml" first.
	slices.SortFunc(out, func(a, b *rbacv1.ClusterRole) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// ClusterRole returns the embedded ClusterRole called name, a new copy at
// each call.
func ClusterRole(name string) (*rbacv1.ClusterRole, error) {
	r, err := decode(name + ".yaml")
	if err != nil {
		return nil, err
	}
	if r.Name != name {
		return nil, fmt.Errorf("%s.yaml holds ClusterRole %q", name, r.Name)
	}
	return r, nil
}

// decode reads one generated file: a single ClusterRole, which
// controller-gen starts with a document separator.
func decode(file string) (*rbacv1.ClusterRole, error) {
	data, err := manifests.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("no generated ClusterRole %s: %w", file, err)
	}
	r := &rbacv1.ClusterRole{}
	if err := yaml.UnmarshalStrict(data, r); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", file, err)
	}
	if r.Kind != "ClusterRole" || r.Name == "" {
		return nil, fmt.Errorf("%s is not a named ClusterRole (kind %q, name %q)", file, r.Kind, r.Name)
	}
	return r, nil
}
