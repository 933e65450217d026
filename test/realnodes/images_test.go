package realnodes

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/liqo-go/liqo/pkg/images/catalog"
	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
	"github.com/liqo-go/liqo/test/realpods"
)

// TestOurImagesRun: the testbed builds our server components' images from
// the sources, publishes them in a cluster's registry under the names a
// chart uses, and a real node runs them: the controller manager's image
// answers --version with the testbed's tag.
func TestOurImagesRun(t *testing.T) {
	ctx := realpods.Timeout(t, 8*time.Minute) // a cold build compiles the manager
	c := west
	if err := c.PushComponents(ctx, catalog.ControllerManager); err != nil {
		t.Fatal(err)
	}
	ns := realpods.Namespace(ctx, t, c, "images")
	comp, err := catalog.Lookup(catalog.ControllerManager)
	if err != nil {
		t.Fatal(err)
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "version", Namespace: ns}, Spec: corev1.PodSpec{
		NodeSelector: realpods.OnRealNodes, RestartPolicy: corev1.RestartPolicyNever,
		Containers: []corev1.Container{{Name: "manager", Image: comp.Ref(testbed.TestImageTag), Args: []string{"--version"}}}}}
	cs := c.Client()
	if _, err := cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	harness.Eventually(ctx, t, "the manager's image to run to completion", func() (bool, error) {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, "version", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if p.Status.Phase == corev1.PodFailed {
			t.Fatalf("the pod failed: %+v", p.Status)
		}
		return p.Status.Phase == corev1.PodSucceeded, nil
	})
	out, err := cs.CoreV1().Pods(ns).GetLogs("version", &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != catalog.ControllerManager+" "+testbed.TestImageTag {
		t.Fatalf("the image printed %q", got)
	}
}
