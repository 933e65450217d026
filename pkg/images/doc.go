// Package images builds OCI images without Docker and serves them from a
// registry of the project's own.
//
// Images are built from files — static binaries and other files of this
// machine, or bytes — as one deterministic layer on an empty base (Layer,
// FromEntries, Binary, Busybox), so the same inputs give the same digest
// whatever the files' timestamps; Index groups per-architecture images
// into a multi-platform one. They are published by Push into a plain-HTTP
// registry under the path containerd asks a mirror for (see MirrorRef),
// such as a Registry of this package, or written by WriteLayout into an
// OCI layout directory.
//
// The images of Liqo's own server components are named in one table
// (package catalog: ghcr.io/liqo-go/<name>, the names a Helm chart uses by
// default) and built from source by BuildComponent: static
// binaries cross-compiled with the Go toolchain, one index for all
// platforms, the same digest for the same sources. hack/images (make
// images) writes and pushes them.
package images
