// Package podpolicy is what a provider lets its consumers' pods ask of it:
// the PodPolicy (the Pod Security Standards level, priority and runtime
// classes, tolerations of reserved and dedicated taints, volumes,
// credentials, and annotations and labels other systems act upon), and
// Vet, which lists what a consumer's pod spec asks beyond it, each refusal
// naming the chart value and flag that would allow it. The ShadowPod
// webhook vets every consumer's ShadowPod with it; the reflected objects'
// policy shares its rule for metadata keys (RefusedKeys) and for volume
// claims (VetClaimSpec).
package podpolicy
