// Package playground implements the liqo-playground binary (and so
// `liqoctl playground`, which runs it): local testbed clusters that keep
// running after the command returns. It is a binary of its own because
// the testbed runs only on Linux and links the data plane's kernel
// libraries, which liqoctl, built for every OS, must not.
//
// Each cluster is owned by its own background process (`liqo-playground
// serve`), so clusters can be stopped one by one and a crashed owner takes
// exactly its own control plane down with it. The owners publish their state
// in DIR/<name>.state.json and the admin kubeconfig in DIR/<name>.kubeconfig.
package playground
