package remotecluster

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	toolscache "k8s.io/client-go/tools/cache"

	"github.com/liqo-go/liqo/pkg/testbed"
	"github.com/liqo-go/liqo/test/harness"
)

var cluster *testbed.Cluster

func TestMain(m *testing.M) {
	testbed.Main(m, func(tb *testbed.Testbed) { cluster = tb.Clusters[0] },
		testbed.ClusterSpec{Name: "milan", Nodes: []testbed.NodePool{{Count: 0}}})
}

// watchCounter counts the watches open through a Cluster's transport.
type watchCounter struct{ open atomic.Int64 }

func (w *watchCounter) wrap(rt http.RoundTripper) http.RoundTripper {
	return roundTripper(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil || req.URL.Query().Get("watch") != "true" {
			return resp, err
		}
		w.open.Add(1)
		resp.Body = &countedBody{ReadCloser: resp.Body, done: func() { w.open.Add(-1) }}
		return resp, nil
	})
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

type countedBody struct {
	io.ReadCloser
	once sync.Once
	done func()
}

func (b *countedBody) Close() error {
	b.once.Do(b.done)
	return b.ReadCloser.Close()
}

// TestNamespaceCacheShared: the users of one namespace share one cache, one
// watch per kind whatever their number; each gets the events until it goes,
// and the last one's going stops the cache and its watch.
func TestNamespaceCacheShared(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var watches watchCounter
	c, err := New("milan", "1", cluster.Config, Options{WrapTransport: watches.wrap})
	if err != nil {
		t.Fatal(err)
	}
	ns := "shared"
	if _, err := cluster.Client().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	opts := CacheOptions{Name: "test"}
	type user struct {
		stop context.CancelFunc
		seen atomic.Int64
	}
	users := make([]*user, 2)
	for i := range users {
		u := &user{}
		uctx, stop := context.WithCancel(ctx)
		u.stop = stop
		nc, err := c.NamespaceCache(uctx, ns, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Watch(uctx, &corev1.ConfigMap{}, toolscache.ResourceEventHandlerFuncs{
			AddFunc: func(any) { u.seen.Add(1) },
		}); err != nil {
			t.Fatal(err)
		}
		users[i] = u
	}
	defer users[1].stop()
	if n := c.Caches(); n != 1 {
		t.Fatalf("%d caches for two users of one namespace, want 1", n)
	}
	create := func(name string) {
		t.Helper()
		if _, err := cluster.Client().CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("first")
	harness.Eventually(ctx, t, "both users told of the ConfigMap", func() (bool, error) {
		// kube-root-ca.crt and ours.
		return users[0].seen.Load() == 2 && users[1].seen.Load() == 2, nil
	})
	if n := watches.open.Load(); n != 1 {
		t.Errorf("%d watches open for two users of ConfigMaps in one namespace, want 1", n)
	}

	users[0].stop()
	create("second")
	harness.Eventually(ctx, t, "the remaining user told of the second ConfigMap", func() (bool, error) {
		return users[1].seen.Load() == 3, nil
	})
	if n := users[0].seen.Load(); n != 2 {
		t.Errorf("the user gone was told of %d ConfigMaps, want the 2 before it went", n)
	}
	if n := c.Caches(); n != 1 {
		t.Errorf("%d caches with one user left, want 1", n)
	}

	users[1].stop()
	harness.Eventually(ctx, t, "the cache and its watch stopped with the last user", func() (bool, error) {
		return c.Caches() == 0 && watches.open.Load() == 0, nil
	})
}
