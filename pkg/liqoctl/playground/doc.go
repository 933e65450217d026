// Package playground implements `liqoctl playground`: local testbed clusters
// that keep running after the command returns.
//
// Each cluster is owned by its own background process (`liqoctl playground
// serve`), so clusters can be stopped one by one and a crashed owner takes
// exactly its own control plane down with it. The owners publish their state
// in DIR/<name>.state.json and the admin kubeconfig in DIR/<name>.kubeconfig.
package playground
