// Package record turns a cluster's ServiceExport into the ExportRecord its
// direct peers read (Forge), and a record back into the merge.Export it
// stands for (Export), as pure functions. What a receiver may believe of a
// record is package trust's to say, never this one's: a peer's forge is no
// defence.
package record
