package merge

import (
	"slices"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/utils/ptr"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// unionPorts is the union of the ports of exports, oldest first: a port
// clashing with one already taken (the same name, or the same number and
// protocol, as a port that differs otherwise) is left out, so the oldest
// export's port wins.
func unionPorts(oldestFirst []Export) []mcsv1beta1.ServicePort {
	var out []mcsv1beta1.ServicePort
	for _, e := range oldestFirst {
		for _, p := range e.Ports {
			if slices.ContainsFunc(out, func(q mcsv1beta1.ServicePort) bool { return samePort(p, q) || clash(p, q) }) {
				continue
			}
			out = append(out, p)
		}
	}
	return out
}

// samePort tells whether two ports are the same port.
func samePort(a, b mcsv1beta1.ServicePort) bool {
	return a.Name == b.Name && a.Port == b.Port && a.Protocol == b.Protocol && ptr.Deref(a.AppProtocol, "") == ptr.Deref(b.AppProtocol, "")
}

// clash tells whether two different ports cannot both be the import's: one
// name for two ports, or two names for one port number and protocol (a
// Service refuses both).
func clash(a, b mcsv1beta1.ServicePort) bool {
	return a.Name == b.Name || (a.Port == b.Port && a.Protocol == b.Protocol)
}

// samePorts tells whether two exports have the same ports, in any order.
func samePorts(a, b []mcsv1beta1.ServicePort) bool {
	if len(a) != len(b) {
		return false
	}
	for _, p := range a {
		if !slices.ContainsFunc(b, func(q mcsv1beta1.ServicePort) bool { return samePort(p, q) }) {
			return false
		}
	}
	return true
}

// ServedPorts are the ports of e's endpoints (its EndpointSlices' ports,
// by name) that serve a port of the import: those whose Service port is
// the same as one of imported. A port of e that lost a conflict (the same
// name with another number, say) is left out, so that traffic to the
// import's port never reaches a cluster that does not expose it.
func ServedPorts(imported []mcsv1beta1.ServicePort, e Export, endpointPorts []discoveryv1.EndpointPort) []discoveryv1.EndpointPort {
	var out []discoveryv1.EndpointPort
	for _, ep := range endpointPorts {
		name := ptr.Deref(ep.Name, "")
		i := slices.IndexFunc(e.Ports, func(p mcsv1beta1.ServicePort) bool { return p.Name == name })
		if i < 0 || !slices.ContainsFunc(imported, func(q mcsv1beta1.ServicePort) bool { return samePort(e.Ports[i], q) }) {
			continue
		}
		out = append(out, ep)
	}
	return out
}
