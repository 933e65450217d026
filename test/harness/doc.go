// Package harness holds helpers for tests only. It is apart from package
// testbed, which liqoctl links to run the playground, so that the binary
// does not carry the testing package.
package harness
