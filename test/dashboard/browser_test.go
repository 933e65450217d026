package dashboard

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/liqo-go/liqo/pkg/liqoctl/dashboard"
	"github.com/liqo-go/liqo/test/browser"
	"github.com/liqo-go/liqo/test/harness"
)

// screenshotEnv, set to 1, makes TestBrowserPage write its screenshot to
// the README's image instead of a temporary directory.
const screenshotEnv = "LIQO_UPDATE_SCREENSHOT"

// page is the dashboard open in headless Chromium, with what the page
// logged as errors and every URL it requested.
type page struct {
	ctx      context.Context
	mu       sync.Mutex
	errors   []string
	requests []string
}

func openPage(t *testing.T) *page {
	t.Helper()
	ctx, cancel, err := browser.New(context.Background(), os.Stderr, 1440, 1000)
	if err != nil {
		t.Fatalf("the browser test needs headless Chromium: %v", err)
	}
	t.Cleanup(cancel)
	p := &page{ctx: ctx}
	if err := chromedp.Listen(ctx, p.record); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(server.URL)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.checkClean(t) })
	return p
}

func (p *page) record(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e := ev.(type) {
	case *cdpruntime.EventConsoleAPICalled:
		if e.Type == cdpruntime.ConsoleAPICalledTypeError {
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value))
			}
			p.errors = append(p.errors, "console.error: "+strings.Join(args, " "))
		}
	case *cdpruntime.EventExceptionThrown:
		p.errors = append(p.errors, "exception: "+e.ExceptionDetails.Text+" "+fmt.Sprint(e.ExceptionDetails.Exception))
	case *log.EventEntryAdded:
		if e.Entry.Level == log.EntryLevelError {
			p.errors = append(p.errors, "browser log: "+e.Entry.Text+" "+e.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, e.Request.URL)
	}
}

// checkClean: no console error, and no request to any host but the
// dashboard's.
func (p *page) checkClean(t *testing.T) {
	t.Helper()
	own, _ := url.Parse(server.URL)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.errors {
		t.Errorf("the page logged an error: %s", e)
	}
	for _, r := range p.requests {
		u, err := url.Parse(r)
		if err != nil || (u.Scheme != "data" && u.Host != own.Host) {
			t.Errorf("the page requested %s, not on the dashboard's host %s", r, own.Host)
		}
	}
	if len(p.requests) == 0 {
		t.Errorf("no request seen: the network events were not recorded")
	}
}

// eval evaluates a JavaScript expression in the page into T.
func eval[T any](p *page, js string) (T, error) {
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](js))
}

// waitPage waits until the expression, which returns "" when the page
// shows what is wanted and else what it shows, returns "".
func waitPage(ctx context.Context, t *testing.T, p *page, what, js string) {
	t.Helper()
	harness.Eventually(ctx, t, what+" on the page", func() (bool, error) {
		got, err := eval[string](p, js)
		if err != nil {
			return false, err
		}
		if got != "" {
			return false, fmt.Errorf("the page shows %s", got)
		}
		return true, nil
	})
}

func (p *page) keys(t *testing.T, keys string) {
	t.Helper()
	if err := chromedp.Do(p.ctx, chromedp.KeyEvent(keys)); err != nil {
		t.Fatal(err)
	}
}

// topologyJS returns "" when the topology has exactly these clusters and
// peerings, the peerings of the given health ("" for any).
func topologyJS(clusters, peerings []string, health string) string {
	c, _ := json.Marshal(clusters)
	p, _ := json.Marshal(peerings)
	return fmt.Sprintf(`(() => {
  const cs = [...document.querySelectorAll('#nodes [data-cluster]')].map(e => e.dataset.cluster).sort();
  const ps = [...document.querySelectorAll('#edges [data-peering]')].map(e => e.dataset.peering + ':' + e.dataset.health).sort();
  const want = %s, wantP = %s, health = %q;
  const ok = JSON.stringify(cs) === JSON.stringify(want) && ps.length === wantP.length &&
    wantP.every((id, i) => ps[i] && ps[i].startsWith(id + ':') && (health === '' || ps[i] === id + ':' + health));
  return ok ? '' : 'clusters ' + cs.join(',') + ', peerings ' + ps.join(',');
})()`, c, p, health)
}

const activeKeyJS = `(document.activeElement && document.activeElement.dataset && document.activeElement.dataset.key) || ''`

// TestBrowserPage: the page in headless Chromium draws the clusters and
// the peerings, the namespace matrix and the refused pod; it is
// navigable by keyboard; axe-core finds no serious accessibility
// violation; it writes the README's screenshot. No console error, no
// request leaves the dashboard's host.
func TestBrowserPage(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	waitState(ctx, t, "the setup's picture", steady)
	p := openPage(t)

	waitPage(ctx, t, p, "three clusters and two healthy peerings",
		topologyJS([]string{"milan", "naples", "rome"}, []string{"rome->milan", "rome->naples"}, dashboard.HealthHealthy))
	waitPage(ctx, t, p, "shop's twins in the matrix", `(() => {
  const row = document.querySelector('[data-namespace="rome/shop"]');
  if (!row) return 'no row for rome/shop';
  const twins = [...row.querySelectorAll('[data-twin]')].map(td => td.dataset.twin + ':' + td.textContent);
  const ok = twins.length === 2 && twins.every(t => t.includes('shop-rome') && t.includes('Ready'));
  return ok ? '' : twins.join(' | ');
})()`)
	waitPage(ctx, t, p, "the pod naples refused", `(() => {
  const row = document.querySelector('[data-pod="rome/shop/privileged-naples"]');
  return row && row.textContent.includes('OffloadingBackOff') && row.textContent.includes('naples refused') ? '' : 'no refused pod row';
})()`)

	t.Run("keyboard", func(t *testing.T) {
		// Tab reaches the topology's first item (after the skip link).
		var key string
		for range 6 {
			p.keys(t, kb.Tab)
			var err error
			if key, err = eval[string](p, activeKeyJS); err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(key, "cluster:") {
				break
			}
		}
		if key != "cluster:milan" {
			t.Fatalf("Tab focused %q, want the first cluster, milan", key)
		}
		// The arrow keys walk the clusters, then the peerings.
		var walked []string
		for range 4 {
			p.keys(t, kb.ArrowRight)
			k, err := eval[string](p, activeKeyJS)
			if err != nil {
				t.Fatal(err)
			}
			walked = append(walked, k)
		}
		if want := []string{"cluster:naples", "cluster:rome", "peering:rome->milan", "peering:rome->naples"}; !slices.Equal(walked, want) {
			t.Fatalf("ArrowRight walked %v, want %v", walked, want)
		}
		p.keys(t, kb.ArrowLeft)
		p.keys(t, kb.Enter)
		waitPage(ctx, t, p, "rome → milan's details", `(() => {
  const h = document.querySelector('#details-body h3');
  const rows = [...document.querySelectorAll('#details-body tr')].map(r => r.textContent);
  return h && h.textContent === 'Peering rome → milan' && rows.some(r => r.startsWith('cpu4')) ? '' : (h ? h.textContent : 'no details') + ' ' + rows.join('|');
})()`)
		// Escape clears the selection.
		p.keys(t, kb.Escape)
		waitPage(ctx, t, p, "no selection", `document.querySelector('#details-body').textContent.startsWith('Select') ? '' : 'still selected'`)
		p.keys(t, kb.Enter)
	})

	t.Run("accessibility (axe-core)", func(t *testing.T) {
		src, err := browser.AxeCore(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eval[chromedp.Void](p, src); err != nil {
			t.Fatalf("injecting axe-core: %v", err)
		}
		actx, acancel := context.WithTimeout(p.ctx, time.Minute)
		defer acancel()
		type violation struct {
			ID, Impact, Help string
			Nodes            []struct{ Target []string }
		}
		vs, err := chromedp.Run(actx, chromedp.Evaluate[[]violation](`axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice']}})
  .then(r => r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map(n => ({target: n.target.map(String)}))})))`,
			chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			if v.Impact == "serious" || v.Impact == "critical" {
				t.Errorf("axe-core: %s violation %s (%s) at %v", v.Impact, v.ID, v.Help, v.Nodes)
			} else {
				t.Logf("axe-core: %s finding %s (%s)", v.Impact, v.ID, v.Help)
			}
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		png, err := chromedp.Run(p.ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "dashboard.png")
		if os.Getenv(screenshotEnv) == "1" {
			_, file, _, _ := runtime.Caller(0)
			path = filepath.Join(filepath.Dir(file), "..", "..", "docs", "images", "dashboard.png")
		}
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s (%d bytes)", path, len(png))
	})
}

// TestBrowserLive: the page follows the clusters. Unpeering naples takes
// its edge away within 2 s of liqoctl unpeer returning; milan's API server
// frozen turns rome → milan Unhealthy within rome's health check (its
// interval and the provider's grace) and Healthy again once it thaws.
func TestBrowserLive(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	waitState(ctx, t, "the setup's picture", steady)
	p := openPage(t)
	waitPage(ctx, t, p, "the setup's topology",
		topologyJS([]string{"milan", "naples", "rome"}, []string{"rome->milan", "rome->naples"}, dashboard.HealthHealthy))

	t.Run("unpeer", func(t *testing.T) {
		if err := liqo(ctx, "unpeer", "--kubeconfig", kubeconfigs["rome"], "--remote-kubeconfig", kubeconfigs["naples"]); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		within, stop := context.WithTimeout(ctx, 2*time.Second)
		defer stop()
		waitPage(within, t, p, "rome → naples gone", topologyJS([]string{"milan", "naples", "rome"}, []string{"rome->milan"}, ""))
		t.Logf("rome → naples left the page %s after liqoctl unpeer returned", time.Since(start).Round(time.Millisecond))
	})

	t.Run("a frozen provider", func(t *testing.T) {
		pid := tb.Cluster("milan").PIDs()["kube-apiserver"]
		if pid == 0 {
			t.Fatal("milan's API server is not running")
		}
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		thawed := false
		thaw := func() {
			if !thawed {
				thawed = true
				_ = syscall.Kill(pid, syscall.SIGCONT)
			}
		}
		defer thaw()
		start := time.Now()
		within, stop := context.WithTimeout(ctx, healthCheck+grace+20*time.Second)
		defer stop()
		waitPage(within, t, p, "rome → milan Unhealthy", topologyJS([]string{"milan", "naples", "rome"}, []string{"rome->milan"}, dashboard.HealthUnhealthy))
		t.Logf("rome → milan turned Unhealthy %s after milan's API server froze (health check every %s, grace %s)",
			time.Since(start).Round(time.Millisecond), healthCheck, grace)
		thaw()
		waitPage(ctx, t, p, "rome → milan Healthy again", topologyJS([]string{"milan", "naples", "rome"}, []string{"rome->milan"}, dashboard.HealthHealthy))
	})
}
