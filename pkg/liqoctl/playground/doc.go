// Package playground is `liqoctl playground`: it runs the liqo-playground
// binary with the same arguments. The playground's clusters run on Linux
// only and link the testbed and the data plane, which liqoctl, built for
// every OS as a kubectl plugin, does not carry.
package playground
