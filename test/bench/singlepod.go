package main

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
)

// Single-pod latency: pods created one at a time, paced, each timed from
// its create call to an informer seeing it Running. Unlike a Deployment of
// N, nothing queues: what is measured is the path of one pod.
const (
	singlePods     = 40
	singlePodPause = 330 * time.Millisecond // ~3 pods per second
)

// podLatencies creates count bare pods in namespace, one every pause,
// requesting requests (none if nil: in an offloaded namespace, a pod that
// requests resources is held by the placement gate until placed), and
// returns each one's create → Running time, sorted; the pods are deleted
// afterwards.
func podLatencies(ctx context.Context, cs kubernetes.Interface, namespace, prefix string, count int, pause time.Duration, requests corev1.ResourceList) ([]time.Duration, error) {
	var mu sync.Mutex
	running := map[string]time.Time{}
	stop := make(chan struct{})
	defer close(stop)
	watchPods(cs, namespace, stop, func(p *corev1.Pod) {
		if p.Status.Phase != corev1.PodRunning {
			return
		}
		mu.Lock()
		if _, ok := running[p.Name]; !ok {
			running[p.Name] = time.Now()
		}
		mu.Unlock()
	})
	created := map[string]time.Time{}
	defer func() {
		for name := range created {
			_ = cs.CoreV1().Pods(namespace).Delete(context.Background(), name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
		}
	}()
	for i := range count {
		name := fmt.Sprintf("%s-%d", prefix, i)
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "single"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx",
				Resources: corev1.ResourceRequirements{Requests: requests}}}}}
		start := time.Now()
		if _, err := cs.CoreV1().Pods(namespace).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			return nil, err
		}
		created[name] = start
		time.Sleep(pause)
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 2*time.Minute, true, func(context.Context) (bool, error) {
		mu.Lock()
		defer mu.Unlock()
		return len(running) >= count, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for %d pods Running one at a time: %w", count, err)
	}
	mu.Lock()
	defer mu.Unlock()
	out := make([]time.Duration, 0, count)
	for name, start := range created {
		out = append(out, running[name].Sub(start))
	}
	slices.Sort(out)
	return out, nil
}
