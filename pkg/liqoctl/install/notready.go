package install

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// notReadyWatch keeps, while Helm waits for the components, the last seen
// reasons why pods of the release's namespace are not Ready. Helm's own
// error on a timeout says only "context deadline exceeded", and its
// rollback removes the pods that would tell why: the reasons are read
// before it.
type notReadyWatch struct {
	mu   sync.Mutex
	last []string
}

// watch samples the pods of namespace every interval until ctx ends,
// keeping the last sample that found some not Ready.
func (w *notReadyWatch) watch(ctx context.Context, cs kubernetes.Interface, namespace string, interval time.Duration) {
	_ = wait.PollUntilContextCancel(ctx, interval, true, func(ctx context.Context) (bool, error) {
		pods, err := cs.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil // the next sample may do; the last one stays
		}
		var out []string
		for i := range pods.Items {
			if why := notReady(&pods.Items[i]); why != "" {
				out = append(out, why)
			}
		}
		// An empty sample is kept out: on a timeout Helm's rollback deletes
		// the pods, and the reasons from before it are the ones to show.
		if len(out) > 0 {
			w.mu.Lock()
			w.last = out
			w.mu.Unlock()
		}
		return false, nil
	})
}

// explain adds to err the pods that were not Ready at the last sample.
func (w *notReadyWatch) explain(err error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.last) == 0 {
		return err
	}
	return fmt.Errorf("%w; not Ready when it ended: %s", err, strings.Join(w.last, "; "))
}

// notReady says why pod p is not Ready, or "" if it is: a container's
// waiting reason and message (ErrImagePull, ImagePullBackOff,
// CrashLoopBackOff with its last exit), else the scheduler's, else its
// phase.
func notReady(p *corev1.Pod) string {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady && c.Status == corev1.ConditionTrue {
			return ""
		}
	}
	if !p.DeletionTimestamp.IsZero() {
		return "" // an old replica on its way out
	}
	statuses := append(append([]corev1.ContainerStatus{}, p.Status.InitContainerStatuses...), p.Status.ContainerStatuses...)
	for _, s := range statuses {
		switch {
		case s.State.Waiting != nil && s.State.Waiting.Reason != "" && s.State.Waiting.Reason != "PodInitializing":
			why := fmt.Sprintf("pod %s: container %s %s", p.Name, s.Name, s.State.Waiting.Reason)
			if m := s.State.Waiting.Message; m != "" {
				why += ": " + m
			}
			if t := s.LastTerminationState.Terminated; t != nil {
				why += fmt.Sprintf(" (last exit %d %s)", t.ExitCode, strings.TrimSpace(t.Reason+" "+t.Message))
			}
			return why
		case s.State.Running != nil && !s.Ready:
			return fmt.Sprintf("pod %s: container %s running but not ready (its readiness probe fails)", p.Name, s.Name)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse {
			return fmt.Sprintf("pod %s: not scheduled: %s", p.Name, c.Message)
		}
	}
	return fmt.Sprintf("pod %s: %s", p.Name, p.Status.Phase)
}
