// Package version implements `liqoctl version` and holds liqoctl's own
// version: the client version, set at link time, and the lookup of the Liqo
// version installed in a cluster.
package version
