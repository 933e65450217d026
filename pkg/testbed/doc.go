// Package testbed runs real Kubernetes clusters as local processes: etcd,
// kube-apiserver, kube-controller-manager and kube-scheduler built from the Go
// module proxy, with kwok simulating worker nodes. It needs no container
// runtime, so it powers both the test suites and the user playground.
//
// Every cluster gets its own loopback ports, PKI and data directory; by default
// all clusters share the same pod and service CIDRs, like independent real
// clusters do, so that the network fabric is exercised with overlapping ranges.
package testbed
