// Package fabric keeps the network fabric's node agent running: the
// liqo-fabric DaemonSet on every real node (never on virtual nodes), its
// ServiceAccount and its read-only rights on gateways and Configurations.
// The manager applies them at start with server-side apply, so a restart
// with another image or pod CIDR updates them in place.
package fabric
