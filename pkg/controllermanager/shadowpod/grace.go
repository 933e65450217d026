package shadowpod

import (
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
)

// DefaultMaxGracePeriod bounds how long a consumer's pod may take to stop
// once it is deleted (--max-grace-period). Five minutes is well past what
// workloads ask for (Kubernetes' default is 30 s) and short enough that a
// pod the consumer deleted does not run on for long: its quota is counted
// until it is gone (pkg/webhook), so an unbounded grace would also hold the
// consumer's own quota for as long.
const DefaultMaxGracePeriod = 5 * time.Minute

// defaultGracePeriodSeconds is what the API server gives a pod that sets
// none.
const defaultGracePeriodSeconds = 30

// capGracePeriods lowers, in spec, every period a pod can stretch its own
// termination with to at most max seconds: the pod's
// terminationGracePeriodSeconds (set to max when unset and max is below the
// API server's default), the probes' own grace periods (used when a liveness
// or startup probe kills a container; readiness probes may have none) and the preStop hooks' sleep, which the
// API server requires to fit in the pod's grace. A preStop exec or HTTP hook
// needs no cap of its own: the kubelet stops waiting for it at the grace.
// It returns what it lowered, in words, for the Event; nothing when the spec
// was within bounds. max <= 0 caps nothing.
//
// The pod is clamped rather than the ShadowPod refused: a workload asking
// for a long grace (a database flushing on shutdown) is still run, with the
// longest grace this provider allows, instead of never being offloaded.
//
// activeDeadlineSeconds is left alone: it ends a pod sooner, never later.
func capGracePeriods(spec *corev1.PodSpec, maxSeconds int64) []string {
	if maxSeconds <= 0 {
		return nil
	}
	var capped []string
	lower := func(field string, v *int64) {
		if *v > maxSeconds {
			capped = append(capped, fmt.Sprintf("%s %d", field, *v))
			*v = maxSeconds
		}
	}
	switch {
	case spec.TerminationGracePeriodSeconds != nil:
		lower("spec.terminationGracePeriodSeconds", spec.TerminationGracePeriodSeconds)
	case maxSeconds < defaultGracePeriodSeconds:
		spec.TerminationGracePeriodSeconds = ptr.To(maxSeconds)
	}
	containers := func(kind string, cs []corev1.Container) {
		for i := range cs {
			c := &cs[i]
			for _, p := range []struct {
				name  string
				probe *corev1.Probe
			}{{"livenessProbe", c.LivenessProbe}, {"startupProbe", c.StartupProbe}} {
				if p.probe != nil && p.probe.TerminationGracePeriodSeconds != nil {
					lower(fmt.Sprintf("%s %q %s.terminationGracePeriodSeconds", kind, c.Name, p.name), p.probe.TerminationGracePeriodSeconds)
				}
			}
			if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
				lower(fmt.Sprintf("%s %q lifecycle.preStop.sleep.seconds", kind, c.Name), &c.Lifecycle.PreStop.Sleep.Seconds)
			}
		}
	}
	containers("init container", spec.InitContainers)
	containers("container", spec.Containers)
	return capped
}

// seconds is d in whole seconds, at least one for a positive d.
func seconds(d time.Duration) int64 {
	s := int64(d / time.Second)
	if s == 0 && d > 0 {
		return 1
	}
	return s
}
