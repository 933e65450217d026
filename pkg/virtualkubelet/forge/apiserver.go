package forge

import (
	"net/netip"
	"slices"
	"strconv"

	corev1 "k8s.io/api/core/v1"
)

// APIServerHostnames are the names an offloaded pod resolves to its home
// API server: the in-cluster names every API server certificate carries,
// so that the TLS check of in-cluster clients passes on the provider too.
var APIServerHostnames = []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"}

// APIServerPort is the port of Service default/kubernetes in every cluster;
// the fabric translates addresses only, so the port is the same remotely.
const APIServerPort = 443

// withHomeAPIServer points an offloaded pod's in-cluster clients at the
// consumer's API server, reached through the network fabric at apiServer
// (its twin in the consumer's external CIDR; the provider translates the
// host alias into its own view of that CIDR): the in-cluster names resolve
// to it (a host alias), and KUBERNETES_SERVICE_HOST/PORT, which client
// libraries read, name it — unless a container sets them itself. Without
// the fabric (no address) the pod keeps the provider's values, as before.
func withHomeAPIServer(s *corev1.PodSpec, apiServer netip.Addr) {
	if !apiServer.IsValid() {
		return
	}
	s.HostAliases = append(slices.DeleteFunc(s.HostAliases, func(h corev1.HostAlias) bool {
		return slices.ContainsFunc(h.Hostnames, func(n string) bool { return slices.Contains(APIServerHostnames, n) })
	}), corev1.HostAlias{IP: apiServer.String(), Hostnames: slices.Clone(APIServerHostnames)})
	env := []corev1.EnvVar{
		{Name: "KUBERNETES_SERVICE_HOST", Value: "kubernetes.default.svc"},
		{Name: "KUBERNETES_SERVICE_PORT", Value: strconv.Itoa(APIServerPort)},
		{Name: "KUBERNETES_SERVICE_PORT_HTTPS", Value: strconv.Itoa(APIServerPort)},
	}
	for _, cs := range [][]corev1.Container{s.InitContainers, s.Containers} {
		for i := range cs {
			for _, e := range env {
				if !slices.ContainsFunc(cs[i].Env, func(have corev1.EnvVar) bool { return have.Name == e.Name }) {
					cs[i].Env = append(cs[i].Env, e)
				}
			}
		}
	}
}
