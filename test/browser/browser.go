// Package browser drives headless Debian Chromium for the tests and the
// benchmark of the dashboard's page, and brings axe-core for its
// accessibility check.
package browser

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/chromedp/chromedp"

	"github.com/liqo-go/liqo/pkg/testbed"
)

// New starts headless Debian Chromium (installed first when
// missing and this process is root, under the testbed's host-package
// lock) and returns a chromedp context of one tab in it, and the function
// that closes the browser. A missing browser is an error naming the
// package to install, never a skip.
func New(ctx context.Context, progress io.Writer, width, height int) (context.Context, context.CancelFunc, error) {
	if err := testbed.EnsureBrowser(ctx, progress); err != nil {
		return nil, nil, err
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(testbed.BrowserPath),
		chromedp.Headless,
		// Root (as CI runs) has no user namespace sandbox for Chromium.
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.WindowSize(width, height),
		// No request may leave the machine: no component updates, no
		// safe-browsing lists, no metrics.
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-background-networking", true),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	bctx, cancelTab := chromedp.NewContext(actx)
	if err := chromedp.Do(bctx); err != nil {
		cancelTab()
		cancelAlloc()
		return nil, nil, fmt.Errorf("starting %s headless: %w", testbed.BrowserPath, err)
	}
	return bctx, func() { cancelTab(); cancelAlloc() }, nil
}

// AxeVersion is the axe-core release the accessibility checks inject.
const AxeVersion = "4.10.3"

// AxeCore returns axe-core's axe.min.js, from npm's registry through the
// machine's npm (`npm pack`), cached beside the testbed's binaries.
func AxeCore(ctx context.Context) (string, error) {
	dir := filepath.Join(testbed.DefaultCacheDir(), "axe-core-"+AxeVersion)
	path := filepath.Join(dir, "axe.min.js")
	if b, err := os.ReadFile(path); err == nil {
		return string(b), nil
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return "", errors.New("npm is missing: the accessibility check fetches axe-core with it (apt-get install npm, or Node.js's own)")
	}
	tmp, err := os.MkdirTemp("", "axe-core-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	cmd := exec.CommandContext(ctx, "npm", "pack", "axe-core@"+AxeVersion, "--pack-destination", tmp)
	cmd.Dir = tmp
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("npm pack axe-core@%s: %w\n%s", AxeVersion, err, out)
	}
	src, err := untarFile(filepath.Join(tmp, "axe-core-"+AxeVersion+".tgz"), "package/axe.min.js")
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.WriteFile(path+".tmp", src, 0o644); err != nil {
		return "", err
	}
	return string(src), os.Rename(path+".tmp", path)
}

func untarFile(tgz, name string) ([]byte, error) {
	f, err := os.Open(tgz)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, err
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("%s in %s: %w", name, tgz, err)
		}
		if h.Name == name {
			return io.ReadAll(tr)
		}
	}
}
