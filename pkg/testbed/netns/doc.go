// Package netns creates, enters and removes the named network namespaces of
// the testbed's real nodes and underlay, and opens sockets inside them.
//
// A socket keeps the network namespace it was created in, whatever thread
// later uses it: a listener made here inside a namespace serves that
// namespace for its whole life, from an ordinary goroutine. That is how the
// testbed joins namespaces without giving the root namespace any address of
// theirs. Entering a namespace is per OS thread, so every function here locks
// its goroutine to a thread while it is inside, and a thread that cannot get
// back to the original namespace is retired rather than reused.
package netns
