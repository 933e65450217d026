// Package harness holds helpers for tests only. It is apart from package
// testbed, which the liqo-playground binary links, so that the binary
// does not carry the testing package.
package harness
