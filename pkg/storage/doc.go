// Package storage will hold the virtual storage class provisioner, PVC/PV
// reflection and volume move. Not implemented yet.
package storage
