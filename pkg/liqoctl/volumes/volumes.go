// Package volumes finds the storage fabric's volumes on providers, which
// liqoctl unoffload and unpeer would delete with the twin namespaces they
// live in: both refuse while there are any, naming them, unless the user
// passes --delete-remote-volumes.
package volumes

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/liqo-go/liqo/pkg/consts"
)

// Flag is the flag that lets a command delete remote volumes.
const Flag = "delete-remote-volumes"

// Remote lists the local PVCs, as namespace/name (on provider), whose
// volumes live on a provider, keeping those match accepts (namespace,
// provider).
func Remote(ctx context.Context, c client.Reader, match func(namespace, provider string) bool) ([]string, error) {
	var pvs corev1.PersistentVolumeList
	if err := c.List(ctx, &pvs); err != nil {
		return nil, fmt.Errorf("listing the PersistentVolumes: %w", err)
	}
	var out []string
	for _, pv := range pvs.Items {
		provider := pv.Annotations[consts.RemoteClusterAnnotation]
		ref := pv.Spec.ClaimRef
		if provider == "" || ref == nil || !match(ref.Namespace, provider) {
			continue
		}
		out = append(out, fmt.Sprintf("%s/%s (on %s)", ref.Namespace, ref.Name, provider))
	}
	sort.Strings(out)
	return out, nil
}

// Refuse is the error of a command that would delete the remote volumes
// listed, what being what it does ("unoffloading namespace shop").
func Refuse(what string, volumes []string) error {
	return fmt.Errorf("%s would delete, with their data, the remote volumes of %s; move or back them up first, "+
		"or pass --%s to delete them", what, strings.Join(volumes, ", "), Flag)
}
