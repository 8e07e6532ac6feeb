package console_test

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
)

// The console in a real browser: headless Chromium, driven over the
// DevTools protocol (chromedp), against three real in-process nodes.
//
//	go test ./console -run Browser -console.screenshots ../docs/figures/console
//
// writes the screenshots of docs/console.md.

var screenshots = flag.String("console.screenshots", "", "write a PNG of each view of the browser test into this directory")

// chromium finds headless Chromium, or skips the test and says why
// (COHORT_REQUIRE_CHROMIUM=1, which .ci/run sets once it has installed
// it, makes its absence a failure).
func chromium(t *testing.T) string {
	if p := os.Getenv("COHORT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	const why = "no Chromium on PATH (chromium, chromium-browser, google-chrome) nor COHORT_CHROMIUM: install Debian's chromium (.ci/run does when root)"
	if os.Getenv("COHORT_REQUIRE_CHROMIUM") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
	return ""
}

// browser starts headless Chromium with a fresh profile and returns a tab.
func browser(t *testing.T, ctx context.Context, exe string) context.Context {
	profile, err := os.MkdirTemp("", "cohort-console-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.UserDataDir(profile),
		chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1200, 900),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-quic", true))
	alloc, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	tab, cancelTab := chromedp.NewContext(alloc)
	t.Cleanup(func() {
		cancelTab()
		cancelAlloc()
		// The browser's helpers may still write to the profile briefly.
		for range 50 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	do(t, tab, chromedp.EmulateViewport(1200, 900))
	return tab
}

func do(t *testing.T, tab context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(tab, steps...); err != nil {
		t.Fatal(err)
	}
}

func run[T any](t *testing.T, tab context.Context, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(tab, a)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// shot writes a screenshot of the tab's viewport when -console.screenshots
// is set, in shotColours colours so the files stay small.
func shot(t *testing.T, tab context.Context, name string) {
	t.Helper()
	if *screenshots == "" {
		return
	}
	b, err := fewerColours(run(t, tab, chromedp.CaptureScreenshot()), shotColours)
	if err == nil {
		err = os.WriteFile(filepath.Join(*screenshots, name+".png"), b, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// shotColours is enough for flat pages: the commonest colours include the
// shades of anti-aliased text.
const shotColours = 64

// fewerColours re-encodes a PNG with its n commonest colours, each pixel
// taking the nearest of them.
func fewerColours(b []byte, n int) ([]byte, error) {
	src, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	r := src.Bounds()
	count := map[color.RGBA]int{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			count[color.RGBAModel.Convert(src.At(x, y)).(color.RGBA)]++
		}
	}
	common := slices.SortedFunc(maps.Keys(count), func(a, b color.RGBA) int {
		return cmp.Or(cmp.Compare(count[b], count[a]), cmp.Compare(a.R, b.R), cmp.Compare(a.G, b.G), cmp.Compare(a.B, b.B), cmp.Compare(a.A, b.A))
	})
	pal := color.Palette{}
	for _, c := range common[:min(n, len(common))] {
		pal = append(pal, c)
	}
	dst := image.NewPaletted(r, pal)
	nearest := map[color.RGBA]uint8{}
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			c := color.RGBAModel.Convert(src.At(x, y)).(color.RGBA)
			i, ok := nearest[c]
			if !ok {
				i = uint8(pal.Index(c))
				nearest[c] = i
			}
			dst.SetColorIndex(x, y, i)
		}
	}
	var out bytes.Buffer
	err = (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&out, dst)
	return out.Bytes(), err
}

// An operator signs in, watches a job run to its result, approves one job
// and rejects another, reads the ledger and the other views, and signs
// out; a forged cross-site POST and a request without a session are
// refused.
func TestConsoleInBrowser(t *testing.T) {
	exe := chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	k := startConsortium(t, ctx)
	n3, base := k.c.Node(approver), k.srv[approver].URL
	tab := browser(t, ctx, exe)

	// Without a session every page leads to the sign-in form; a wrong token is refused.
	do(t, tab, chromedp.Navigate(base+"/console/jobs"), chromedp.WaitVisible(chromedp.ID("token")))
	if loc := run(t, tab, chromedp.Location()); loc != base+"/console/login" {
		t.Fatalf("without a session: at %s", loc)
	}
	do(t, tab, chromedp.SendKeys(chromedp.ID("token"), strings.Repeat("0", 64)), chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitVisible(chromedp.CSS(".flash.error")))
	if msg := run(t, tab, chromedp.Text(chromedp.CSS(".flash.error"))); !strings.Contains(msg, "wrong token") {
		t.Fatalf("a wrong token: %q", msg)
	}
	shot(t, tab, "login")
	do(t, tab, chromedp.SendKeys(chromedp.ID("token"), n3.APIToken()), chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitVisible(chromedp.ID("jobs-live")))
	if c := run(t, tab, chromedp.Evaluate[string](`document.cookie`)); c != "" {
		t.Fatalf("the page's script reads the cookies %q: the session cookie must be HttpOnly", c)
	}

	watchJobRun(t, ctx, k, tab)

	// A noised sum, approved through the API, spends ε of org3's dataset
	// column org3.csv.v.
	noised := k.submitSpec(t, ctx, k.noisedSpec())
	if err := n3.Approve(ctx, noised); err != nil {
		t.Fatal(err)
	}
	if rec, err := n3.Wait(ctx, noised); err != nil || rec.Status != node.StatusDone {
		t.Fatalf("the noised sum: %v %s %q", err, rec.Status, rec.Error)
	}

	// A job submitted while the approvals page is open appears there
	// without a reload; reject it with a reason.
	do(t, tab, chromedp.Navigate(base+"/console/approvals"), chromedp.WaitVisible(chromedp.ID("awaiting-live")))
	run(t, tab, chromedp.Evaluate[bool](`window.cohortLoadedOnce = true`))
	id := k.submit(t, ctx)
	await := "#await-" + id
	do(t, tab, chromedp.WaitVisible(chromedp.CSS(await)))
	if !run(t, tab, chromedp.Evaluate[bool](`window.cohortLoadedOnce === true`)) {
		t.Fatal("the approvals page reloaded instead of updating in place")
	}
	do(t, tab, chromedp.SendKeys(chromedp.CSS(await+` input[name="reason"]`), "not this quarter"),
		chromedp.Click(chromedp.CSS(await+" button.reject")), chromedp.WaitVisible(chromedp.CSS(".flash.ok")))
	rec, err := n3.Wait(ctx, id)
	if err != nil || rec.Status != node.StatusFailed || !strings.Contains(rec.Error, "rejected at org3: not this quarter") {
		t.Fatalf("rejected in the browser: %v %s %q", err, rec.Status, rec.Error)
	}

	// A third job stays waiting: the jobs list shows it beside the finished ones.
	pending := k.submit(t, ctx)
	do(t, tab, chromedp.Navigate(base+"/console/jobs"), chromedp.WaitVisible(chromedp.ID("finished-jobs")),
		chromedp.WaitVisible(chromedp.CSS("#active-jobs .s-awaiting-approval")))
	shot(t, tab, "jobs")
	do(t, tab, chromedp.Navigate(base+"/console/approvals"), chromedp.WaitVisible(chromedp.CSS("#await-"+pending)))
	if s := run(t, tab, chromedp.Text(chromedp.CSS("table.budget"))); !strings.Contains(s, "org3.csv.v") || !strings.Contains(s, "0.25") || !strings.Contains(s, "0.75") {
		t.Fatalf("the budget of org3.csv.v after a draw of ε 0.25: %q", s)
	}
	shot(t, tab, "approvals")

	readViews(t, tab, base)
	forgedPostsRefused(t, ctx, k, tab, pending)

	// Sign out: the pages lead to the sign-in form again.
	do(t, tab, chromedp.Navigate(base+"/console/jobs"), chromedp.WaitVisible(chromedp.ID("signout")),
		chromedp.Click(chromedp.ID("signout")), chromedp.WaitVisible(chromedp.ID("token")))
	do(t, tab, chromedp.Navigate(base+"/console/disclosures"), chromedp.WaitVisible(chromedp.ID("token")))
	if loc := run(t, tab, chromedp.Location()); loc != base+"/console/login" {
		t.Fatalf("signed out: at %s", loc)
	}
}

// watchJobRun opens a job's page in a second tab while the job awaits
// approval, approves it in the first, and watches the second tab show it
// run to its result without reloading.
func watchJobRun(t *testing.T, ctx context.Context, k *consortium, tab context.Context) {
	base := k.srv[approver].URL
	id := k.submit(t, ctx)
	watch, cancel := chromedp.NewContext(tab)
	defer cancel()
	do(t, watch, chromedp.EmulateViewport(1200, 900), chromedp.Navigate(base+"/console/jobs/"+id),
		chromedp.WaitVisible(chromedp.CSS("#job-live .s-awaiting-approval")))
	run(t, watch, chromedp.Evaluate[bool](`window.cohortLoadedOnce = true`))
	do(t, tab, chromedp.Navigate(base+"/console/approvals"), chromedp.WaitVisible(chromedp.CSS("#await-"+id)),
		chromedp.Click(chromedp.CSS("#await-"+id+" button.approve")), chromedp.WaitVisible(chromedp.CSS(".flash.ok")))
	do(t, watch, chromedp.WaitVisible(chromedp.CSS("#job-live .s-done")), chromedp.WaitVisible(chromedp.ID("result")))
	if !run(t, watch, chromedp.Evaluate[bool](`window.cohortLoadedOnce === true`)) {
		t.Fatal("the job page reloaded instead of updating in place")
	}
	if res := run(t, watch, chromedp.Text(chromedp.ID("result"))); !strings.Contains(res, `"sum": 66`) {
		t.Fatalf("the job page shows the result %q", res)
	}
	if d, _ := k.c.Node(approver).Policy().Decision(id); d.Approval != "approved" {
		t.Fatalf("approved in the browser, yet the policy store has %+v", d)
	}
	shot(t, watch, "job")
}

// readViews reads the ledger, the consortium and the node.
func readViews(t *testing.T, tab context.Context, base string) {
	do(t, tab, chromedp.Navigate(base+"/console/disclosures"), chromedp.WaitVisible(chromedp.ID("ledger-rows")))
	if s := run(t, tab, chromedp.Text(chromedp.ID("totals"))); !strings.Contains(s, "messages") {
		t.Fatalf("disclosure totals: %q", s)
	}
	if s := run(t, tab, chromedp.Text(chromedp.ID("ledger-rows"))); !strings.Contains(s, "org1") || !strings.Contains(s, "ciphertext") {
		t.Fatalf("ledger rows: %q", s)
	}
	shot(t, tab, "disclosures")
	do(t, tab, chromedp.Navigate(base+"/console/consortium"), chromedp.WaitVisible(chromedp.ID("members")))
	if s := run(t, tab, chromedp.Text(chromedp.ID("members"))); !strings.Contains(s, "org2") || !strings.Contains(s, "connected") {
		t.Fatalf("members: %q", s)
	}
	shot(t, tab, "consortium")
	do(t, tab, chromedp.Navigate(base+"/console/node"), chromedp.WaitVisible(chromedp.ID("key")))
	shot(t, tab, "node")
}

// forgedPostsRefused loads an attacker's page that posts a form to approve
// a waiting job, once from another origin of the same site (another port
// of 127.0.0.1: the SameSite cookie goes along, the origin check and the
// CSRF token refuse) and once from another site (localhost: no cookie).
func forgedPostsRefused(t *testing.T, ctx context.Context, k *consortium, tab context.Context, id string) {
	base := k.srv[approver].URL
	attacker := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<!doctype html><form id="f" method="post" action="%s/console/jobs/%s/approve">`+
			`<input name="csrf" value="guessed"></form><script>document.getElementById("f").submit()</script>`, base, id)
	}))
	defer attacker.Close()
	for _, host := range []string{"127.0.0.1", "localhost"} {
		page := strings.Replace(attacker.URL, "127.0.0.1", host, 1)
		do(t, tab, chromedp.Navigate(page))
		body := run(t, tab, chromedp.Poll[string](`location.pathname.endsWith("/approve") && document.readyState === "complete" && document.body.innerText`))
		if !strings.Contains(body, "refused") && !strings.Contains(body, "not signed in") {
			t.Fatalf("a forged POST from %s was answered: %q", host, body)
		}
		if d, _ := k.c.Node(approver).Policy().Decision(id); d.Verdict != policy.Awaiting {
			t.Fatalf("a forged POST from %s decided the job: %+v", host, d)
		}
	}
}
