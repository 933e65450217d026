package reflection

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"

	"github.com/liqo-go/liqo/pkg/virtualkubelet/forge"
)

// The kinds the reflection copies into the twin namespaces.
const (
	ConfigMaps     = "configmaps"
	Secrets        = "secrets"
	Services       = "services"
	EndpointSlices = "endpointslices"
	Ingresses      = "ingresses"
)

// KindOptions tune the reflection of one kind.
type KindOptions struct {
	// Workers reflect objects of the kind in parallel, for each provider; 0
	// disables the kind.
	Workers int
	// Policy selects the objects reflected (DenyList when empty).
	Policy forge.Policy
}

// DefaultKinds are the reflected kinds and their workers when unset.
func DefaultKinds() map[string]KindOptions {
	return map[string]KindOptions{
		ConfigMaps:     {Workers: 8, Policy: forge.DenyList},
		Secrets:        {Workers: 8, Policy: forge.DenyList},
		Services:       {Workers: 8, Policy: forge.DenyList},
		EndpointSlices: {Workers: 16, Policy: forge.DenyList},
		Ingresses:      {Workers: 4, Policy: forge.DenyList},
		Events:         {Workers: 4},
		// Few: one per remote volume.
		PersistentVolumeClaims: {Workers: 2},
	}
}

// ValidateKinds checks a kinds configuration given by a user.
func ValidateKinds(kinds map[string]KindOptions) error {
	known := DefaultKinds()
	for name, o := range kinds {
		if _, ok := known[name]; !ok {
			return fmt.Errorf("unknown reflected kind %q (known: %s)", name, strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
		if o.Workers < 0 {
			return fmt.Errorf("%s: workers must be 0 (disabled) or more, not %d", name, o.Workers)
		}
		if o.Policy != "" && o.Policy != forge.DenyList && o.Policy != forge.AllowList {
			return fmt.Errorf("%s: reflection policy must be %s or %s, not %q", name, forge.DenyList, forge.AllowList, o.Policy)
		}
	}
	return nil
}

// resources builds the reflectors of the kinds enabled in cfg.
func (r *providerReflection) resources() (map[string]resource, error) {
	id := r.cfg.LocalClusterID
	all := map[string]func(forge.Policy) resource{
		ConfigMaps: func(p forge.Policy) resource {
			k := sameKind(ConfigMaps, id, forge.ConfigMap, forge.ConfigMapContent)
			k.RemoteName, k.LocalName = forge.RemoteConfigMapName, forge.LocalConfigMapName
			return newKindReflector(r, k, p)
		},
		Secrets: func(p forge.Policy) resource {
			k := sameKind(Secrets, id, forge.Secret, forge.SecretContent)
			k.RemoteName = forge.RemoteSecretName
			return newKindReflector(r, k, p)
		},
		Services: func(p forge.Policy) resource {
			return newKindReflector(r, sameKind(Services, id, forge.Service, forge.ServiceContent), p)
		},
		EndpointSlices: func(p forge.Policy) resource {
			return newKindReflector(r, Kind[*discoveryv1.EndpointSlice, *offv1beta1.ShadowEndpointSlice]{Name: EndpointSlices,
				NewLocal:  func() *discoveryv1.EndpointSlice { return &discoveryv1.EndpointSlice{} },
				NewRemote: func() *offv1beta1.ShadowEndpointSlice { return &offv1beta1.ShadowEndpointSlice{} },
				Forge: func(l *discoveryv1.EndpointSlice, ns string) (*offv1beta1.ShadowEndpointSlice, bool) {
					s := forge.ShadowEndpointSlice(l, ns, id, r.nodeNames())
					return s, s != nil
				},
				Content: forge.ShadowEndpointSliceContent}, p)
		},
		Ingresses: func(p forge.Policy) resource {
			return newKindReflector(r, sameKind(Ingresses, id, forge.Ingress, forge.IngressContent), p)
		},
	}
	out := map[string]resource{}
	for name, o := range r.cfg.Kinds {
		if build, ok := all[name]; ok && o.Workers > 0 {
			out[name] = build(o.Policy)
		}
	}
	if r.cfg.Kinds[Events].Workers > 0 {
		e, err := newEventReflector(r)
		if err != nil {
			return nil, err
		}
		out[Events] = e
	}
	if r.cfg.Kinds[PersistentVolumeClaims].Workers > 0 {
		out[PersistentVolumeClaims] = newVolumeReflector(r)
	}
	return out, nil
}

// sameKind is the Kind of objects copied as objects of the same kind by a
// forge function returning nil for "no copy".
func sameKind[T any, P interface {
	*T
	client.Object
}](name, localClusterID string, f func(P, string, string) P, content func(P) any) Kind[P, P] {
	return Kind[P, P]{Name: name,
		NewLocal: func() P { return new(T) }, NewRemote: func() P { return new(T) },
		Forge: func(local P, ns string) (P, bool) {
			remote := f(local, ns, localClusterID)
			return remote, remote != nil
		},
		Content: content,
	}
}
