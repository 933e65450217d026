// Package fuzz holds the native Go fuzz targets of what a peer's input
// reaches: the local→remote forge functions, quota accounting, the
// consumers' object budget, the resource slice policy, the network
// fabric's checks of CIDRs and addresses and the translation of reflected
// addresses. Each states the properties that must hold for any input.
// `go test` runs their seed corpora; `make fuzz` fuzzes each for FUZZTIME.
package fuzz
