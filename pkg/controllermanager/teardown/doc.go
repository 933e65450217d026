// Package teardown bounds, on a provider, how long a consumer's objects may
// take to go once the provider removes them: a drained Tenant's ShadowPods,
// an unpeered consumer's NamespaceMaps and twin namespaces. A consumer may
// write finalizers on what it keeps here, and a finalizer nobody removes
// holds a deletion forever; past Options.Timeout the provider removes the
// finalizers it did not put itself and deletes the pods still there at
// once (grace 0), with an Event saying so.
package teardown
