// Package webhooktest holds what the tests of the webhook packages share:
// resource lists and containers written briefly, and the cluster and
// manager serving every webhook that their tests through the API server
// run against.
package webhooktest
