// Package crds embeds the generated CustomResourceDefinitions (make generate)
// and installs them, so that tests, the playground and liqoctl apply the same
// manifests the Helm chart ships.
package crds

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

//go:embed *.yaml
var manifests embed.FS

// CRD is a CustomResourceDefinition.
type CRD = apiextensionsv1.CustomResourceDefinition

// All returns the embedded CRDs.
func All() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(manifests, "*.yaml")
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, f := range files {
		data, err := manifests.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd, err := Decode(f, data)
		if err != nil {
			return nil, err
		}
		out = append(out, crd)
	}
	return out, nil
}

// FieldManager owns the CRDs' fields in server-side apply.
const FieldManager = "liqo"

// Install creates or updates every CRD with server-side apply, or only those
// of the given API groups (such as "networking.liqo.io") when some are
// named, and waits until the API server serves them all. It first checks
// that no update drops a version objects are stored in, so that a refused
// upgrade changes no CRD.
func Install(ctx context.Context, cfg *rest.Config, groups ...string) error {
	cs, err := clientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	all, err := All()
	if err != nil {
		return err
	}
	if len(groups) > 0 {
		all = slices.DeleteFunc(all, func(crd *apiextensionsv1.CustomResourceDefinition) bool {
			return !slices.Contains(groups, crd.Spec.Group)
		})
	}
	return apply(ctx, cs, all)
}

// Apply creates or updates the given CRDs (those of a chart other than the
// embedded one: liqoctl install --local-chart-path) as Install does.
func Apply(ctx context.Context, cfg *rest.Config, all []*apiextensionsv1.CustomResourceDefinition) error {
	cs, err := clientset.NewForConfig(cfg)
	if err != nil {
		return err
	}
	return apply(ctx, cs, all)
}

// Decode reads one CRD manifest (name is for errors).
func Decode(name string, data []byte) (*apiextensionsv1.CustomResourceDefinition, error) {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, crd); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", name, err)
	}
	return crd, nil
}

func apply(ctx context.Context, cs clientset.Interface, all []*apiextensionsv1.CustomResourceDefinition) error {
	api := cs.ApiextensionsV1().CustomResourceDefinitions()
	for _, crd := range all {
		existing, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
		case err != nil:
			return fmt.Errorf("reading CRD %s: %w", crd.Name, err)
		default:
			if err := keepsStoredVersions(existing, crd); err != nil {
				return err
			}
		}
	}
	for _, crd := range all {
		crd.APIVersion, crd.Kind = apiextensionsv1.SchemeGroupVersion.String(), "CustomResourceDefinition"
		data, err := json.Marshal(crd)
		if err != nil {
			return err
		}
		if _, err := api.Patch(ctx, crd.Name, types.ApplyPatchType, data,
			metav1.PatchOptions{FieldManager: FieldManager, Force: ptr.To(true)}); err != nil {
			return fmt.Errorf("applying CRD %s: %w", crd.Name, err)
		}
	}
	for _, crd := range all {
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			got, err := api.Get(ctx, crd.Name, metav1.GetOptions{})
			if err != nil {
				return false, err
			}
			for _, c := range got.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for CRD %s to be established: %w", crd.Name, err)
		}
	}
	return waitDiscovered(ctx, cs, all)
}

// waitDiscovered waits until the API server's discovery lists every
// served version of the CRDs. Established comes first: a client whose
// REST mapper reads discovery in between (a manager starting its caches)
// fails with "no matches for kind". One discovery request per group
// version answers for all its CRDs.
func waitDiscovered(ctx context.Context, cs clientset.Interface, all []*apiextensionsv1.CustomResourceDefinition) error {
	plurals := map[string][]string{} // by group version
	for _, crd := range all {
		for _, v := range crd.Spec.Versions {
			if v.Served {
				gv := crd.Spec.Group + "/" + v.Name
				plurals[gv] = append(plurals[gv], crd.Spec.Names.Plural)
			}
		}
	}
	for _, gv := range slices.Sorted(maps.Keys(plurals)) {
		var missing []string
		err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
			list, err := cs.Discovery().ServerResourcesForGroupVersion(gv)
			if err != nil {
				missing = plurals[gv]
				return false, nil //nolint:nilerr // not served yet: a 404 until discovery catches up
			}
			missing = slices.DeleteFunc(slices.Clone(plurals[gv]), func(plural string) bool {
				return slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == plural })
			})
			return len(missing) == 0, nil
		})
		if err != nil {
			return fmt.Errorf("waiting for %s to be served in %s: %w", strings.Join(missing, ", "), gv, err)
		}
	}
	return nil
}

// keepsStoredVersions refuses an update dropping a version objects of the
// CRD are stored in: the API server would refuse it too, but only once the
// CRDs before it had been updated, leaving them half upgraded.
func keepsStoredVersions(existing, update *apiextensionsv1.CustomResourceDefinition) error {
	for _, stored := range existing.Status.StoredVersions {
		if !slices.ContainsFunc(update.Spec.Versions, func(v apiextensionsv1.CustomResourceDefinitionVersion) bool { return v.Name == stored }) {
			return fmt.Errorf("refusing to update CRD %s: objects are stored as %s, which the new version drops (migrate them first)", existing.Name, stored)
		}
	}
	return nil
}
