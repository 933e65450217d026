// Package webhook serves the admission webhooks of the controller manager.
//
// pod.mutate.liqo.io places the pods created in offloaded namespaces (those
// labelled liqo.io/scheduling-enabled=true) as their NamespaceOffloading's
// pod offloading strategy says: the virtual-node toleration and the node
// affinity of LocalAndRemote, Remote or Local, combined with the pod's own.
// A pod whose own constraints leave no allowed node is admitted, with a
// warning and an Event saying why it stays Pending.
//
// shadowpod.validate.liqo.io admits, on a provider, the ShadowPods its
// consumers create: only in their own twin namespaces, with their origin
// label, asking nothing of the provider's podpolicy.PodPolicy forbids (the Pod
// Security Standards level, the provider's nodes, priority and runtime
// classes, ServiceAccounts and tokens, volumes and annotations other
// systems act upon: see podpolicy.PodPolicy.vet), with no negative or malformed
// quantity, and within their Quota, counted as the scheduler counts the
// real pod. A ShadowPod's resources never change once created,
// as the real pod's do not. A dry run is answered as the real request would
// be and reserves nothing.
//
// reflected.validate.liqo.io admits, on a provider, the Services, Secrets
// and Ingresses consumers write in their twin namespaces as the provider's
// reflected.ReflectedPolicy allows: no external IPs, no Service type beyond ClusterIP
// unless allowed, no ServiceAccount token Secret, and Ingresses naming
// their own hosts (none another tenant or the provider serves), without
// snippet annotations. Only consumer identities are judged.
//
// replica.validate.liqo.io keeps, on a provider, each consumer to its own
// replicas (NamespaceMaps and ResourceSlices labelled liqo.io/replication)
// in its tenant namespace: in a peering both ways that namespace also holds
// this cluster's own objects toward the consumer, which RBAC cannot tell
// apart. Only consumer identities are judged.
//
// The server runs inside the manager with a serving certificate and CA it
// makes at start and renews at two thirds of their lifetime, publishing the
// new CA before serving the new certificate (servingKeys), and registers
// itself with the API server by URL: there is no Service or cert-manager
// when the manager is a local process. Every replica checks the
// registration and takes it over when the registered replica no longer
// answers (registrar). Given the CA of the API server's client certificate,
// the server lets no one else send it admission reviews (callerAuth). The
// NamespaceOffloading name and immutable fields need no webhook: the CRD's
// validation rules enforce them.
package webhook
