// Package provision is a small external-provisioner controller on
// controller-runtime: it provisions a PV for each unbound PVC of a
// StorageClass of a given provisioner, and deletes what backs a Released
// PV of it whose reclaim policy is Delete, calling a Provisioner for the
// storage work.
//
// It replaces sigs.k8s.io/sig-storage-lib-external-provisioner, whose
// NewProvisionController registers types in client-go's global scheme on
// every call: with several controllers built while others decode with
// that scheme (the controller manager and the testbed clusters of a test
// binary), its maps were written while read, a fatal error. This one
// runs in a controller-runtime manager, with the manager's own scheme,
// cache and event recorder, and so on the leader only where the manager
// elects one.
package provision
