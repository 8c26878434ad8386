package browsertest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/accessibility"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/chromedp"
)

// ChromiumEnv names the browser the tests drive when set; else Debian's
// chromium (infra/local/install.sh installs it), found on the PATH.
const ChromiumEnv = "CHROMIUM"

// ScreenshotsEnv, set to 1, makes Screenshot write each page's image to
// docs/dashboard/<page>.png; otherwise the images go to the test's
// temporary folder, so that a test run leaves the tree as it was.
const ScreenshotsEnv = "DASHBOARD_SCREENSHOTS"

// TabDeadline bounds a test's use of its tab (Browser.Ctx).
const TabDeadline = 2 * time.Minute

// Browser is a headless Chromium's tab, with what its pages wrote to the
// console.
type Browser struct {
	// Ctx is the tab's chromedp context. It ends TabDeadline after the tab
	// opened, so that a step that waits for what never comes fails the
	// test rather than hanging it.
	Ctx context.Context

	mu       sync.Mutex
	messages []chromedp.ConsoleMessage
	more     chan struct{} // has a value when a message came
}

// NewBrowser starts a headless Chromium (without its sandbox when the
// tests run as root, where it refuses to start with one) and opens a tab,
// both closed at the test's end. Without Chromium the test is skipped, but
// when CI is set, where its absence is a failure.
func NewBrowser(t *testing.T) *Browser {
	t.Helper()
	path := os.Getenv(ChromiumEnv)
	if path == "" {
		path = "chromium"
	}
	found, err := exec.LookPath(path)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no Chromium (%v): make install installs it", err)
		}
		t.Skipf("no Chromium (%v): make install installs it, or set %s", err, ChromiumEnv)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(found), chromedp.WindowSize(1280, 800))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox)
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	tab, cancelTab := chromedp.NewContext(actx)
	ctx, cancel := context.WithTimeout(tab, TabDeadline)
	t.Cleanup(func() { cancel(); cancelTab(); cancelAlloc() })
	b := &Browser{Ctx: ctx, more: make(chan struct{}, 1)}
	if err := chromedp.Do(ctx); err != nil { // starts the browser and the tab
		t.Fatalf("start Chromium: %v", err)
	}
	messages := chromedp.Console(ctx)
	go func() {
		for m, err := range messages {
			if err != nil {
				return
			}
			b.mu.Lock()
			b.messages = append(b.messages, m)
			b.mu.Unlock()
			select {
			case b.more <- struct{}{}:
			default:
			}
		}
	}()
	return b
}

// Problems returns the errors and warnings the pages wrote to the console
// so far: exceptions, console.error and console.warn calls, and the
// browser's own entries (a script or style the CSP refused is one, from
// the "security" source), but the 404 of /favicon.ico, which Chromium asks
// of every site and the dashboard, under /dashboard, does not serve.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, m := range b.messages {
		if m.Source == "network" && strings.HasSuffix(m.URL, "/favicon.ico") {
			continue
		}
		switch m.Type {
		case chromedp.ConsoleError, chromedp.ConsoleWarning, chromedp.ConsoleException:
			out = append(out, fmt.Sprintf("%s %s (%s %s:%d)", m.Type, m.Text, m.Source, m.URL, m.Line+1))
		}
	}
	return out
}

// WaitProblems waits until the pages have written n problems to the
// console (Problems), and returns them; it fails the test after 10 s.
func (b *Browser) WaitProblems(t *testing.T, n int) []string {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		if p := b.Problems(); len(p) >= n {
			return p
		}
		select {
		case <-b.more:
		case <-timeout:
			t.Fatalf("the console has %d problems, not %d: %s", len(b.Problems()), n, strings.Join(b.Problems(), "; "))
		}
	}
}

// ByName finds the elements whose computed accessible role is role and
// whose accessible name is name, as a screen reader would (the DevTools
// Accessibility domain, Accessibility.queryAXTree): a field by its label,
// a button or a link by its text. chromedp has no such lookup of its own;
// use it as the option of a query, with "" for the selector, which is only
// a label in errors:
//
//	chromedp.Click("", browsertest.ByName("button", "Sign in"))
//
// The query waits until such an element is there.
func ByName(role, name string) chromedp.QueryOption {
	return chromedp.ByFunc(func(ctx context.Context, t *chromedp.Target, n *chromedp.Node) ([]cdp.NodeID, error) {
		res, err := cdp.Call(ctx, t, accessibility.QueryAXTree, accessibility.QueryAXTreeParams{
			NodeID: n.NodeID, Role: role, AccessibleName: name,
		})
		if err != nil {
			return nil, err
		}
		var backend []cdp.BackendNodeID
		for _, ax := range res.Nodes {
			if !ax.Ignored && ax.BackendDOMNodeID != 0 {
				backend = append(backend, ax.BackendDOMNodeID)
			}
		}
		if len(backend) == 0 {
			return nil, nil // not there yet: the query tries again
		}
		pushed, err := cdp.Call(ctx, t, dom.PushNodesByBackendIDsToFrontend, dom.PushNodesByBackendIDsToFrontendParams{BackendNodeIDs: backend})
		if err != nil {
			return nil, err
		}
		return pushed.NodeIDs, nil
	})
}

// Root is the repository's root folder.
func Root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// axeScript is axe-core's axe.min.js, as make install puts it in
// .cache/dashboard (pinned in infra/local/dashboard/package.json).
var axeScript = sync.OnceValues(func() ([]byte, error) {
	return os.ReadFile(filepath.Join(Root(), ".cache", "dashboard", "node_modules", "axe-core", "axe.min.js"))
})

// Violation is one rule of axe-core the page breaks.
type Violation struct {
	ID     string `json:"id"`
	Impact string `json:"impact"`
	Help   string `json:"help"`
	Nodes  []struct {
		Target []any `json:"target"`
	} `json:"nodes"`
}

// String describes v and the elements that break it.
func (v Violation) String() string {
	var targets []string
	for _, n := range v.Nodes {
		targets = append(targets, fmt.Sprint(n.Target...))
	}
	return fmt.Sprintf("%s (%s): %s: %s", v.ID, v.Impact, v.Help, strings.Join(targets, ", "))
}

// Axe runs axe-core on the current page and fails the test on each
// violation of impact serious or critical, printing them. The script is
// given through DevTools (Runtime.evaluate), which the page's CSP, allowing
// no inline script, does not govern.
func (b *Browser) Axe(t *testing.T, pageName string) {
	t.Helper()
	script, err := axeScript()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("no axe-core (%v): make install", err)
		}
		t.Skipf("no axe-core (%v): make install", err)
	}
	if err := chromedp.Do(b.Ctx, chromedp.Evaluate[chromedp.Void](string(script))); err != nil {
		t.Fatalf("%s: load axe-core: %v", pageName, err)
	}
	raw, err := chromedp.Run(b.Ctx, chromedp.Evaluate[[]byte](
		`axe.run(document, {resultTypes: ["violations"]}).then(r => r.violations)`,
		chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("%s: run axe-core: %v", pageName, err)
	}
	var violations []Violation
	if err := json.Unmarshal(raw, &violations); err != nil {
		t.Fatalf("%s: axe-core's answer: %v: %s", pageName, err, raw)
	}
	for _, v := range violations {
		switch v.Impact {
		case "serious", "critical":
			t.Errorf("%s: %s", pageName, v)
		default:
			t.Logf("%s: %s", pageName, v)
		}
	}
}

// Screenshot takes an image of the whole current page (PNG) and writes it
// to docs/dashboard/<pageName>.png when ScreenshotsEnv is 1, else to the
// test's temporary folder.
func (b *Browser) Screenshot(t *testing.T, pageName string) {
	t.Helper()
	png, err := chromedp.Run(b.Ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("%s: screenshot: %v", pageName, err)
	}
	dir := t.TempDir()
	if os.Getenv(ScreenshotsEnv) == "1" {
		dir = filepath.Join(Root(), "docs", "dashboard")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, pageName+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}
