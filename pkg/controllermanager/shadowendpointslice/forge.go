package shadowendpointslice

import (
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	offv1beta1 "github.com/liqo-go/liqo/apis/offloading/v1beta1"
	"github.com/liqo-go/liqo/pkg/consts"
)

// ManagedBy is the endpointslice.kubernetes.io/managed-by value of every
// EndpointSlice kept for a ShadowEndpointSlice. The provider's own
// EndpointSlice controller only manages (and garbage-collects) the slices
// carrying its own value, so this one keeps it off ours; it is also what
// the manager's EndpointSlice cache selects on.
const ManagedBy = "endpointslice.reflection.liqo.io"

// ForgeEndpointSlice builds the EndpointSlice kept for ses: same name and
// namespace, the ShadowEndpointSlice's labels and annotations, its
// template, and a controller owner reference so that the garbage collector
// deletes the slice with the ShadowEndpointSlice. Our two managed-by labels
// override the ShadowEndpointSlice's own: a consumer must not be able to
// hand its slice to the provider's EndpointSlice controller, nor hide it
// from our cache.
//
// The endpoints' node names, zones, hints and target references are
// dropped: they would name the provider's own nodes and objects, and a
// consumer naming them could steer the provider's topology-aware routing
// (internalTrafficPolicy: Local) to its endpoints.
//
// The API server's defaults of the ports are filled in, so that a slice
// read back compares equal to the forged one and needs no update.
//
// The consumer's addresses are translated into the provider's view of them
// (translate: the Configuration of that consumer, which the network fabric
// or liqoctl network init made); an address translate refuses, outside the
// consumer's own pod and external CIDRs, is dropped and returned in
// dropped: a consumer must not point the provider's Services at the
// provider's nodes, its API server or another tenant's pods. A nil
// translate (no Configuration of that consumer: the provider knows none of
// its addresses) drops them all.
func ForgeEndpointSlice(ses *offv1beta1.ShadowEndpointSlice, translate func(string) (string, bool)) (_ *discoveryv1.EndpointSlice, dropped []string) {
	if translate == nil {
		translate = func(string) (string, bool) { return "", false }
	}
	lbls := make(map[string]string, len(ses.Labels)+2)
	for k, v := range ses.Labels {
		lbls[k] = v
	}
	lbls[discoveryv1.LabelManagedBy] = ManagedBy
	lbls[consts.ManagedByLabel] = consts.ManagedByValue

	var annotations map[string]string
	if len(ses.Annotations) > 0 {
		annotations = make(map[string]string, len(ses.Annotations))
		for k, v := range ses.Annotations {
			annotations[k] = v
		}
	}

	t := ses.Spec.Template.DeepCopy()
	endpoints := t.Endpoints[:0]
	for i := range t.Endpoints {
		e := t.Endpoints[i]
		e.NodeName, e.Zone, e.Hints, e.TargetRef = nil, nil, nil, nil
		kept := e.Addresses[:0]
		for _, a := range e.Addresses {
			if local, ok := translate(a); ok {
				kept = append(kept, local)
			} else {
				dropped = append(dropped, a)
			}
		}
		if e.Addresses = kept; len(kept) == 0 {
			continue
		}
		endpoints = append(endpoints, e)
	}
	t.Endpoints = endpoints
	if len(t.Endpoints) == 0 {
		t.Endpoints = nil
	}
	for i := range t.Ports {
		if t.Ports[i].Name == nil {
			t.Ports[i].Name = ptr.To("")
		}
		if t.Ports[i].Protocol == nil {
			t.Ports[i].Protocol = ptr.To(corev1.ProtocolTCP)
		}
	}
	return &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Name:            ses.Name,
			Namespace:       ses.Namespace,
			Labels:          lbls,
			Annotations:     annotations,
			OwnerReferences: []metav1.OwnerReference{ownerRef(ses)},
		},
		AddressType: t.AddressType,
		Endpoints:   t.Endpoints,
		Ports:       t.Ports,
	}, dropped
}

func ownerRef(ses *offv1beta1.ShadowEndpointSlice) metav1.OwnerReference {
	return metav1.OwnerReference{
		APIVersion:         offv1beta1.GroupVersion.String(),
		Kind:               kind,
		Name:               ses.Name,
		UID:                ses.UID,
		Controller:         ptr.To(true),
		BlockOwnerDeletion: ptr.To(true),
	}
}

const kind = "ShadowEndpointSlice"

// EndpointSliceCache is the EndpointSlice entry of the cache options of a
// manager running this controller: only our slices, or the manager would
// hold every EndpointSlice of the cluster in memory. A slice outside the
// selection is only ever read, uncached, when a create collides with it.
func EndpointSliceCache() cache.ByObject {
	return cache.ByObject{Label: labels.SelectorFromSet(labels.Set{discoveryv1.LabelManagedBy: ManagedBy})}
}
