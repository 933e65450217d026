// Package budget holds each consumer to its ObjectBudget on a provider:
// the number and the bytes of the objects it writes in bulk (its ConfigMaps,
// Secrets, Services, Ingresses, PersistentVolumeClaims, ShadowEndpointSlices
// and ShadowPods in its twin namespaces, its ResourceSlices, NamespaceMaps
// and ExportRecords in its tenant namespace), which no ResourceQuota
// bounds across namespaces or by size. The Guard checks and reserves each write
// against a ledger that a cache of the objects' sizes keeps in step.
package budget
