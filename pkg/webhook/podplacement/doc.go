// Package podplacement places, on a consumer, the pods of offloaded
// namespaces as their NamespaceOffloading's pod offloading strategy says
// (MutatePod: the virtual-node toleration and node affinity, combined with
// the pod's own), reports as an Event a pod whose own constraints leave it
// no allowed node (SetupConflictReporter), and keeps DaemonSets' pods off
// virtual nodes unless a DaemonSet opts in.
package podplacement
