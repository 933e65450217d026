// Package quota counts what consumers run on a provider against their
// Quotas: Usage is what a pod spec takes, as the scheduler counts the real
// pod; Limit is what a consumer's Quotas allow; a Ledger keeps, per
// consumer, the usage of what is stored plus what admission has reserved
// and not yet seen stored, so that concurrent requests cannot together
// exceed a limit. FeedLedger keeps a ledger in step with the stored
// ShadowPods and their pods, and the UsageWriter writes each consumer's
// stored usage into its Quotas' status.used.
package quota
