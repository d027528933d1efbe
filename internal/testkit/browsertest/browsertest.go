// Package browsertest drives a real headless Chromium (Debian's chromium,
// through chromedp) for the tests of latscope serve's browser view. A
// Browser fails its test on any JavaScript exception, console error or
// warning, or failed request (a network error, or a status of 400 or
// more) that the test did not declare with Expect; screenshots are
// checked not blank and kept.
package browsertest

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/latscope/latscope/internal/testkit/testenv"
)

// ScreenshotsEnv names a directory where screenshots are kept after the
// test (default: the test's temporary directory).
const ScreenshotsEnv = "LATSCOPE_SCREENSHOTS"

// Browser is one Chromium tab whose problems fail the test.
type Browser struct {
	t        testing.TB
	ctx      context.Context
	mu       sync.Mutex
	problems []string
	expected []expectation
	urls     map[network.RequestID]string
	shots    string
}

type expectation struct {
	urlPart string
	status  int64
}

// New starts Chromium with a fresh profile, off the network but for the
// pages the test opens; it skips (fails under
// LATSCOPE_REQUIRE_INTEGRATION=1) without Chromium.
func New(t testing.TB) *Browser {
	t.Helper()
	bin := testenv.Chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1400, 1000),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-component-update", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	b := &Browser{t: t, ctx: ctx, urls: map[network.RequestID]string{}, shots: os.Getenv(ScreenshotsEnv)}
	if b.shots == "" {
		b.shots = t.TempDir()
	}
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, p := range b.problems {
			t.Errorf("browser: %s", p)
		}
	})
	if err := chromedp.Listen(ctx, b.observe); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatalf("chromium network events: %v", err)
	}
	if _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); err != nil {
		t.Fatalf("chromium runtime events: %v", err)
	}
	return b
}

// Context is the tab's chromedp context, for actions the helpers lack.
func (b *Browser) Context() context.Context { return b.ctx }

// Expect declares a failed request the test causes on purpose: a
// response of status to a URL containing urlPart (and the console line
// the browser writes about it).
func (b *Browser) Expect(urlPart string, status int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.expected = append(b.expected, expectation{urlPart, int64(status)})
}

func (b *Browser) isExpected(url string, status int64) bool {
	for _, e := range b.expected {
		if strings.Contains(url, e.urlPart) && (status == 0 || e.status == status) {
			return true
		}
	}
	return false
}

// observe runs on chromedp's reading goroutine: it only records.
func (b *Browser) observe(ev any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch e := ev.(type) {
	case *network.EventRequestWillBeSent:
		b.urls[e.RequestID] = e.Request.URL
	case *network.EventResponseReceived:
		if e.Response.Status >= 400 && !b.isExpected(e.Response.URL, e.Response.Status) {
			b.problems = append(b.problems, fmt.Sprintf("request %s: status %d", e.Response.URL, e.Response.Status))
		}
	case *network.EventLoadingFailed:
		// A request the page itself ends (a stream closed on leaving
		// the page, an aborted fetch) is canceled, not failed.
		if !e.Canceled && e.ErrorText != "net::ERR_ABORTED" {
			b.problems = append(b.problems, fmt.Sprintf("request %s failed: %s %s", b.urls[e.RequestID], e.ErrorText, e.BlockedReason))
		}
	case *runtime.EventExceptionThrown:
		msg := e.ExceptionDetails.Text
		if ex := e.ExceptionDetails.Exception; ex != nil {
			msg += " " + ex.Description
		}
		b.problems = append(b.problems, fmt.Sprintf("exception at %s:%d: %s", e.ExceptionDetails.URL, e.ExceptionDetails.LineNumber, msg))
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning || e.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			b.problems = append(b.problems, fmt.Sprintf("console.%s: %s", e.Type, strings.Join(args, " ")))
		}
	}
}

// Problems returns what went wrong so far (and forgets it), for a test
// that checks them itself.
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	p := b.problems
	b.problems = nil
	return p
}

// Do runs actions, failing the test on an error or a timeout.
func (b *Browser) Do(timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		b.t.Fatalf("browser: %v\n%s", err, strings.Join(b.Problems(), "\n"))
	}
}

// Open loads url and waits until the page says it is ready: the browser
// view's pages set data-ready on <body> once their data is drawn.
func (b *Browser) Open(url string) {
	b.t.Helper()
	b.Do(30*time.Second, chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS(`body[data-ready="1"]`)))
}

// Navigate loads url without waiting for a page of the browser view (a
// redirect, the login page).
func (b *Browser) Navigate(url string) {
	b.t.Helper()
	b.Do(30*time.Second, chromedp.Navigate(url))
}

// Click clicks the first element matching a CSS selector.
func (b *Browser) Click(selector string) {
	b.t.Helper()
	b.Do(30*time.Second, chromedp.Click(chromedp.CSS(selector)))
}

// ClickAndWait clicks an element that leads to another page of the view
// and waits until that page is ready.
func (b *Browser) ClickAndWait(selector string) {
	b.t.Helper()
	// The element's own click(), not a mouse at its coordinates: a page
	// that redraws while the machine is slow (a run page following its
	// events) can move the element between the two (a clean clone's CI
	// clicked beside the link at load 8).
	b.Do(30*time.Second, script(`document.body.removeAttribute("data-ready"); document.querySelector(`+strconv.Quote(selector)+`).click(); true`))
	b.waitReady("the page after clicking " + selector)
}

// waitReady waits for the page that a click or a form leads to. It polls
// (WaitFor) rather than waiting on a DOM query, which can stay bound to
// the document being left when the machine is slow.
func (b *Browser) waitReady(what string) {
	b.t.Helper()
	b.WaitFor(what, `!!document.body && document.body.getAttribute("data-ready") === "1"`, 60*time.Second)
}

// script is an action that runs JavaScript for its effect.
func script(expression string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[bool](expression)(ctx, t)
		return err
	})
}

// Fill types text into the input matching a CSS selector, after clearing it.
func (b *Browser) Fill(selector, text string) {
	b.t.Helper()
	b.Do(30*time.Second, script(`document.querySelector(`+strconv.Quote(selector)+`).value = ""; true`), chromedp.SendKeys(chromedp.CSS(selector), text))
}

// Eval evaluates a JavaScript expression in the page; promises are awaited.
func Eval[T any](b *Browser, expression string) T {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expression, chromedp.EvalAsValue, awaitPromise))
	if err != nil {
		b.t.Fatalf("browser: evaluating %s: %v", expression, err)
	}
	return v
}

func awaitPromise(p *runtime.EvaluateParams) {
	t := true
	p.AwaitPromise = &t
}

// WaitFor polls a JavaScript condition until it is true or timeout
// passes; it keeps polling across navigations (which end an evaluation).
func (b *Browser) WaitFor(what, expression string, timeout time.Duration) {
	b.t.Helper()
	deadline := time.Now().Add(timeout)
	var last error
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expression))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	loc, _ := chromedp.Run(b.ctx, chromedp.Location())
	b.t.Fatalf("browser: %s did not happen within %s (at %s; last error %v)\n%s", what, timeout, loc, last, strings.Join(b.Problems(), "\n"))
}

// Location is the page's URL.
func (b *Browser) Location() string {
	b.t.Helper()
	loc, err := chromedp.Run(b.ctx, chromedp.Location())
	if err != nil {
		b.t.Fatalf("browser: location: %v", err)
	}
	return loc
}

// Login logs in through base's login page and waits for the page it
// lands on.
func (b *Browser) Login(base, user, password string) {
	b.t.Helper()
	b.Do(30*time.Second, chromedp.Navigate(base+"/login"), chromedp.WaitVisible(chromedp.ID("user")))
	b.SubmitLogin(user, password)
	b.waitReady("the page after logging in")
}

// SubmitLogin fills in and submits the login form of the page open.
func (b *Browser) SubmitLogin(user, password string) {
	b.t.Helper()
	b.Fill("#user", user)
	b.Fill("#password", password)
	b.Click("#submit")
}

// Screenshot captures the whole page as name.png in the screenshots
// directory and fails the test when it is blank (fewer than 8 colours,
// or nearly every pixel the same) or fails the accessibility audit.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Fatalf("browser: screenshot %s: %v", name, err)
	}
	path := filepath.Join(b.shots, name+".png")
	if err := os.WriteFile(path, shot, 0o644); err != nil {
		b.t.Fatal(err)
	}
	if err := notBlank(shot); err != nil {
		b.t.Errorf("screenshot %s: %v", path, err)
	}
	b.Audit(name)
	return path
}

func notBlank(shot []byte) error {
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		return fmt.Errorf("not a PNG: %w", err)
	}
	return checkPixels(img)
}

func checkPixels(img image.Image) error {
	counts := map[[4]uint32]int{}
	r := img.Bounds()
	total := 0
	for y := r.Min.Y; y < r.Max.Y; y += 2 {
		for x := r.Min.X; x < r.Max.X; x += 2 {
			cr, cg, cb, ca := img.At(x, y).RGBA()
			counts[[4]uint32{cr >> 8, cg >> 8, cb >> 8, ca >> 8}]++
			total++
		}
	}
	most := 0
	for _, n := range counts {
		most = max(most, n)
	}
	if len(counts) < 8 || float64(most) > 0.999*float64(total) {
		return fmt.Errorf("blank: %d colours, the commonest on %.1f%% of the pixels", len(counts), 100*float64(most)/float64(max(total, 1)))
	}
	return nil
}

// auditScript lists what makes the open page hard to use without a mouse
// or with weak sight: form controls and buttons without an accessible
// name, images (canvas, svg role=img) without a label, and text whose
// colour has less than 4.5:1 contrast (WCAG AA) with the background it
// is drawn on.
const auditScript = `(function () {
  var out = [];
  function visible(el) { var r = el.getBoundingClientRect(); return r.width > 0 && r.height > 0 && getComputedStyle(el).visibility !== "hidden"; }
  function named(el) {
    if (el.getAttribute("aria-label") || el.getAttribute("aria-labelledby") || el.getAttribute("title")) return true;
    if (el.id && document.querySelector('label[for="' + el.id + '"]')) return true;
    if (el.closest("label")) return true;
    if ((el.tagName === "BUTTON" || el.tagName === "A") && el.textContent.trim()) return true;
    if (el.tagName === "INPUT" && (el.type === "submit" || el.type === "button") && el.value) return true;
    return false;
  }
  function describe(el) { return el.tagName.toLowerCase() + (el.id ? "#" + el.id : "") + (el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : ""); }
  document.querySelectorAll("input:not([type=hidden]), select, textarea, button, a[href], canvas, svg[role=img]").forEach(function (el) {
    if (visible(el) && !named(el)) out.push("no accessible name: " + describe(el));
  });
  function rgb(s) { var m = s.match(/[\d.]+/g); return m ? m.map(Number) : [0, 0, 0, 0]; }
  function lum(c) { var a = [c[0], c[1], c[2]].map(function (v) { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * a[0] + 0.7152 * a[1] + 0.0722 * a[2]; }
  function background(el) {
    for (var e = el; e; e = e.parentElement) { var c = rgb(getComputedStyle(e).backgroundColor); if (c.length < 4 || c[3] > 0.5) return c; }
    return [255, 255, 255];
  }
  var seen = 0;
  document.querySelectorAll("body *").forEach(function (el) {
    if (seen > 40 || !visible(el)) return;
    var own = Array.prototype.some.call(el.childNodes, function (n) { return n.nodeType === 3 && n.textContent.trim(); });
    if (!own) return;
    var fg = rgb(getComputedStyle(el).color), bg = background(el);
    var l1 = lum(fg), l2 = lum(bg), ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    if (ratio < 4.5) { seen++; out.push("contrast " + ratio.toFixed(2) + ":1 for " + describe(el) + " (" + el.textContent.trim().slice(0, 30) + ")"); }
  });
  return out;
})()`

// Audit fails the test for the open page's controls without a name and
// text without enough contrast (auditScript).
func (b *Browser) Audit(page string) {
	b.t.Helper()
	for _, p := range Eval[[]string](b, auditScript) {
		b.t.Errorf("%s: %s", page, p)
	}
}

// FrameOuterHTML returns the outer HTML of the first element matching a
// CSS selector inside the page's iframe whose URL contains urlPart,
// waiting for it.
func (b *Browser) FrameOuterHTML(urlPart, selector string) string {
	b.t.Helper()
	var html string
	b.inFrame(urlPart, func(ctx context.Context, opts ...chromedp.QueryOption) (err error) {
		html, err = chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS(selector), opts...))
		return err
	})
	return html
}

// FramePainted waits until the iframe whose URL contains urlPart has
// loaded and drawn two frames since, so that a screenshot shows it (a
// frame in another process paints after its load event).
func (b *Browser) FramePainted(urlPart string) {
	b.t.Helper()
	const painted = `new Promise(function (done) {
		function twice() { requestAnimationFrame(function () { requestAnimationFrame(function () { done(true); }); }); }
		if (document.readyState === "complete") twice(); else addEventListener("load", twice);
	})`
	b.inFrame(urlPart, func(ctx context.Context, _ ...chromedp.QueryOption) error {
		_, err := chromedp.Run(ctx, chromedp.Evaluate[bool](painted, chromedp.EvalAsValue, awaitPromise))
		return err
	})
}

// inFrame runs do in the page's iframe whose URL contains urlPart. A
// sandboxed or cross-site iframe runs in a process of its own (a target
// of type "iframe") that the page cannot script: do runs in that target.
// An iframe in the page's process is reached from its node (passed as a
// query option; do then runs in the page).
func (b *Browser) inFrame(urlPart string, do func(ctx context.Context, opts ...chromedp.QueryOption) error) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, 30*time.Second)
	defer cancel()
	// The iframe's target appears once it has started loading.
	var info *target.Info
	for deadline := time.Now().Add(10 * time.Second); info == nil && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		infos, err := chromedp.Targets(ctx)
		if err != nil {
			b.t.Fatalf("browser: targets: %v", err)
		}
		for _, i := range infos {
			if i.Type == "iframe" && strings.Contains(i.URL, urlPart) {
				info = i
			}
		}
	}
	if info != nil {
		// Detach when done: closing the iframe's target would close the page.
		frameCtx, done := chromedp.NewContext(b.ctx, chromedp.WithTargetID(info.TargetID), chromedp.WithDetachOnCancel())
		defer done()
		runCtx, stop := context.WithTimeout(frameCtx, 30*time.Second)
		defer stop()
		if err := do(runCtx); err != nil {
			b.t.Fatalf("browser: in the iframe %s: %v", info.URL, err)
		}
		return
	}
	nodes, err := chromedp.Run(ctx, chromedp.Nodes(chromedp.CSS(`iframe[src*=`+strconv.Quote(urlPart)+`]`)))
	if err != nil || len(nodes) == 0 {
		b.t.Fatalf("browser: no iframe of %s: %v", urlPart, err)
	}
	if err := do(ctx, chromedp.FromNode(nodes[0])); err != nil {
		b.t.Fatalf("browser: in the iframe of %s: %v", urlPart, err)
	}
}
