// Package e2e holds end-to-end tests that drive the liqoctl binary against
// testbed clusters, the way users do.
package e2e
