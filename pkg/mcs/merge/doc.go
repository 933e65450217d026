// Package merge computes, as pure functions, what the clusterset makes of
// the exports of one Service (same name, same namespace: namespace
// sameness) from its clusters: the properties of the ServiceImport every
// cluster gets, and the conflicts every ServiceExport reports.
//
// The rules are the KEP's: the oldest export wins each property its
// exports disagree on (type, session affinity and its config, internal
// traffic policy, traffic distribution, IP families, exported labels and
// annotations); ports are the union of the exports' ports, a port name used
// with a different port number, protocol or application protocol keeping
// the oldest export's. Any disagreement is a conflict, reported on every
// export of the set with the reasons the KEP names.
package merge
