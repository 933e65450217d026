// Package export validates a cluster's ServiceExports
// (multicluster.x-k8s.io/v1beta1) and reports, in their conditions, what
// the clusterset makes of them:
//
//   - Valid: the Service of the export's name exists in its namespace and
//     can be exported (not ExternalName); reasons Valid, NoService,
//     InvalidServiceType.
//   - Conflict: whether the exports of the Service by the clusterset's
//     clusters disagree (package merge: the oldest wins); reasons
//     NoConflicts or the KEP's conflict kinds joined by commas. Every
//     export of a conflicting set reports it, the winner's too: its owner
//     learns that other clusters export something else under its name.
//
// The exports of the other clusters come from a Clusterset, which also
// says when they change; without one the cluster's exports are alone.
package export
