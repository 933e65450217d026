package merge

import (
	"slices"

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
