package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

type result struct {
	running time.Duration // Deployment created → N pods Running
	deleted time.Duration // Deployment deleted → no pod left
}

// deployAndWait creates a Deployment of n replicas in a fresh namespace and
// times, from an informer, when all its pods run and, after deleting it,
// when they are all gone.
func deployAndWait(ctx context.Context, cs kubernetes.Interface, n int) (result, error) {
	ns, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{
		ObjectMeta: metav1.ObjectMeta{GenerateName: fmt.Sprintf("bench-%d-", n)},
	}, metav1.CreateOptions{})
	if err != nil {
		return result{}, err
	}
	defer func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns.Name, metav1.DeleteOptions{})
	}()
	return deployIn(ctx, cs, ns.Name, n)
}

// deployIn times a Deployment of n replicas in an existing namespace.
func deployIn(ctx context.Context, cs kubernetes.Interface, namespace string, n int) (result, error) {
	var r result
	tracker, stop, err := trackPods(cs, namespace)
	if err != nil {
		return r, err
	}
	defer stop()
	start := time.Now()
	if err := createDeployment(ctx, cs, namespace, n); err != nil {
		return r, err
	}
	if err := tracker.wait(ctx, 30*time.Minute, func(running, total int) bool { return running >= n }); err != nil {
		return r, fmt.Errorf("waiting for %d Running pods: %w", n, err)
	}
	r.running = time.Since(start)

	start = time.Now()
	if err := cs.AppsV1().Deployments(namespace).Delete(ctx, "bench", metav1.DeleteOptions{
		PropagationPolicy: ptr.To(metav1.DeletePropagationForeground),
	}); err != nil {
		return r, err
	}
	if err := tracker.wait(ctx, 30*time.Minute, func(_, total int) bool { return total == 0 }); err != nil {
		return r, fmt.Errorf("waiting for the pods to be deleted: %w", err)
	}
	r.deleted = time.Since(start)
	return r, nil
}

// trackPods starts a podTracker of namespace's pods; stop ends it.
func trackPods(cs kubernetes.Interface, namespace string) (*podTracker, func(), error) {
	tracker := newPodTracker()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(namespace))
	inf := factory.Core().V1().Pods().Informer()
	if _, err := inf.AddEventHandler(tracker.handler()); err != nil {
		return nil, nil, err
	}
	stop := make(chan struct{})
	factory.Start(stop)
	cache.WaitForCacheSync(stop, inf.HasSynced)
	return tracker, func() { close(stop) }, nil
}

// createDeployment creates the Deployment "bench" of n replicas in
// namespace.
func createDeployment(ctx context.Context, cs kubernetes.Interface, namespace string, n int) error {
	labels := map[string]string{"app": "bench"}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "bench"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(int32(n)),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "nginx"}}},
			},
		},
	}
	_, err := cs.AppsV1().Deployments(namespace).Create(ctx, dep, metav1.CreateOptions{})
	return err
}

// podTracker counts pods and Running pods as the informer reports them.
type podTracker struct {
	mu      sync.Mutex
	running map[string]bool
	changed chan struct{}
}

func newPodTracker() *podTracker {
	return &podTracker{running: map[string]bool{}, changed: make(chan struct{}, 1)}
}

func (t *podTracker) set(pod *corev1.Pod, present bool) {
	t.mu.Lock()
	if present {
		t.running[pod.Name] = pod.Status.Phase == corev1.PodRunning
	} else {
		delete(t.running, pod.Name)
	}
	t.mu.Unlock()
	select {
	case t.changed <- struct{}{}:
	default:
	}
}

func (t *podTracker) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { t.set(obj.(*corev1.Pod), true) },
		UpdateFunc: func(_, obj any) { t.set(obj.(*corev1.Pod), true) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if pod, ok := obj.(*corev1.Pod); ok {
				t.set(pod, false)
			}
		},
	}
}

func (t *podTracker) counts() (running, total int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.running {
		if r {
			running++
		}
	}
	return running, len(t.running)
}

func (t *podTracker) wait(ctx context.Context, timeout time.Duration, done func(running, total int) bool) error {
	deadline := time.After(timeout)
	for {
		if done(t.counts()) {
			return nil
		}
		select {
		case <-t.changed:
		case <-deadline:
			running, total := t.counts()
			return fmt.Errorf("timed out with %d pods, %d Running", total, running)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
