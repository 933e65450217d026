// Package webhook serves the admission webhooks of the controller manager
// and wires their handlers, each in a package of its own:
//
//   - pod.mutate.liqo.io and daemonset.mutate.liqo.io, on a consumer, place
//     the pods of offloaded namespaces and keep DaemonSets' pods off virtual
//     nodes (podplacement);
//   - shadowpod.validate.liqo.io, on a provider, admits the ShadowPods its
//     consumers create (shadowpod), as the PodPolicy allows (podpolicy) and
//     within their Quota (quota);
//   - reflected.validate.liqo.io, replica.validate.liqo.io and
//     event.validate.liqo.io, on a provider, judge the other objects
//     consumers write: their reflected Services, Secrets, ConfigMaps,
//     Ingresses, PersistentVolumeClaims and ShadowEndpointSlices, their
//     replicas and their Events (reflected).
//
// Every write of a consumer is held to its ObjectBudget (budget); who a
// consumer is, and which namespaces are its own, is tenancy's.
//
// The server runs inside the manager with a serving certificate and CA it
// makes at start and renews at two thirds of their lifetime, publishing the
// new CA before serving the new certificate (servingKeys), and registers
// itself with the API server by URL: there is no Service or cert-manager
// when the manager is a local process. Every replica checks the
// registration and takes it over when the registered replica no longer
// answers (registrar). In the cluster, the chart's configurations call the
// server through its Service, and the leader keeps them trusting the keys
// every replica serves from a Secret (certPublisher, certFollower). Given
// the CA of the API server's client certificate, the server lets no one
// else send it admission reviews (callerAuth). The NamespaceOffloading name
// and immutable fields need no webhook: the CRD's validation rules enforce
// them.
package webhook
