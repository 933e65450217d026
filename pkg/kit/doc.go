// Package kit is what every controller shares to report
// what it did: one condition setter (bounded messages, valid reasons, a
// transition time that moves only when the status does) and one status
// writer (a merge patch, sent only when something changed), so that every
// custom resource reports the same way and an unchanged reconcile costs no
// API write.
package kit
