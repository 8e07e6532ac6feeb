package console_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
	"github.com/cohortdm/cohort/console"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/node"
)

// One consortium for the HTTP-level tests: sign-in, refusals, the
// cross-site defences, approve and reject, the exports against the ledger
// file, and every page's answer.
func TestConsoleOverHTTP(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	k := startConsortium(t, ctx)
	n3 := k.c.Node(approver)
	base := k.srv[approver].URL

	t.Run("refused without a session", func(t *testing.T) { refusedWithoutSession(t, base) })
	t.Run("sign-in", func(t *testing.T) { signInRules(t, base, n3.APIToken()) })
	t.Run("API unchanged", func(t *testing.T) { apiUnchanged(t, base, n3.APIToken()) })

	o := signIn(t, base, n3.APIToken())
	o.dataDir = k.c.DataDir(approver)
	id := k.submit(t, ctx)
	t.Run("cross-site requests refused", func(t *testing.T) {
		crossSiteRefused(t, o, id)
		if js, _ := n3.Job(id); js.Status != node.StatusAwaiting {
			t.Fatalf("a refused request changed the job: %s", js.Status)
		}
	})
	t.Run("approve", func(t *testing.T) {
		_, body := o.get("/console/approvals")
		if !strings.Contains(body, `id="await-`+id+`"`) || !strings.Contains(body, "ciphertext") {
			t.Fatalf("the approvals page does not show %s and what it would disclose:\n%s", id, body)
		}
		res, _ := o.post("/console/jobs/"+id+"/approve", url.Values{"csrf": {o.csrf}})
		if res.StatusCode != http.StatusSeeOther || !strings.Contains(res.Header.Get("Location"), "done=approved") {
			t.Fatalf("approve: %s %s", res.Status, res.Header.Get("Location"))
		}
		rec, err := n3.Wait(ctx, id)
		if err != nil || rec.Status != node.StatusDone || !strings.Contains(string(rec.Result), `"sum": 66`) {
			t.Fatalf("approved job: %v %s %s", err, rec.Status, rec.Result)
		}
		_, body = o.get("/console/jobs/" + id)
		for _, want := range []string{`&#34;sum&#34;: 66`, "What this node sent", `class="timeline"`, "org1"} {
			if !strings.Contains(body, want) {
				t.Fatalf("the job page lacks %q:\n%s", want, body)
			}
		}
	})
	t.Run("reject", func(t *testing.T) {
		id := k.submit(t, ctx)
		res, _ := o.post("/console/jobs/"+id+"/reject", url.Values{"csrf": {o.csrf}, "reason": {"  "}})
		if loc := res.Header.Get("Location"); !strings.Contains(loc, "error=") {
			t.Fatalf("a rejection without a reason was taken: %s", loc)
		}
		res, _ = o.post("/console/jobs/"+id+"/reject", url.Values{"csrf": {o.csrf}, "reason": {"not this quarter"}, "back": {"job"}})
		if loc := res.Header.Get("Location"); !strings.HasPrefix(loc, "/console/jobs/"+id+"?") || !strings.Contains(loc, "done=rejected") {
			t.Fatalf("reject: %s %s", res.Status, loc)
		}
		rec, err := n3.Wait(ctx, id)
		if err != nil || rec.Status != node.StatusFailed || !strings.Contains(rec.Error, "rejected at org3: not this quarter") {
			t.Fatalf("rejected job: %v %s %q", err, rec.Status, rec.Error)
		}
	})
	t.Run("exports match the ledger", func(t *testing.T) { exportsMatchLedger(t, o, k.c.DataDir(approver)) })
	t.Run("pages", func(t *testing.T) { everyPage(t, o, id) })
	t.Run("sign out", func(t *testing.T) {
		res, _ := o.post("/console/logout", url.Values{"csrf": {o.csrf}})
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login" {
			t.Fatalf("sign out: %s %s", res.Status, res.Header.Get("Location"))
		}
		if res, _ := o.get("/console/jobs"); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("signed out, yet /console/jobs answers %s", res.Status)
		}
	})
}

func refusedWithoutSession(t *testing.T, base string) {
	o := &operator{t: t, base: base, client: newClient(t)}
	for _, p := range []string{"/console/jobs", "/console/disclosures", "/console/approvals", "/console/node", "/console/consortium", "/console/jobs/x"} {
		res, body := o.get(p)
		if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/console/login" || strings.Contains(body, "org1") {
			t.Errorf("GET %s without a session: %s to %q", p, res.Status, res.Header.Get("Location"))
		}
	}
	for _, p := range []string{"/console/events", "/console/disclosures.csv", "/console/disclosures.jsonl"} {
		if res, _ := o.get(p); res.StatusCode != http.StatusSeeOther && res.StatusCode != http.StatusUnauthorized {
			t.Errorf("GET %s without a session: %s", p, res.Status)
		}
	}
	res, _ := o.post("/console/jobs/x/approve", url.Values{"csrf": {"0"}})
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST approve without a session: %s", res.Status)
	}
	// A forged cookie is no session.
	u, _ := url.Parse(base)
	o.client.Jar.SetCookies(u, []*http.Cookie{{Name: console.CookieName, Value: strings.Repeat("ab", 32), Path: "/console/"}})
	if res, _ := o.get("/console/jobs"); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a made-up session id was taken: %s", res.Status)
	}
}

func signInRules(t *testing.T, base, token string) {
	o := &operator{t: t, base: base, client: newClient(t)}
	res, body := o.get("/console/login")
	if res.StatusCode != http.StatusOK || !strings.Contains(body, `type="password"`) {
		t.Fatalf("sign-in page: %s", res.Status)
	}
	csp := res.Header.Get("Content-Security-Policy")
	if !strings.Contains(csp, "script-src 'self'") || strings.Contains(csp, "unsafe") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy: %q", csp)
	}
	// The token in a URL signs nobody in.
	if res, _ := o.get("/console/jobs?token=" + token); res.StatusCode != http.StatusSeeOther {
		t.Errorf("a token in the URL was taken: %s", res.Status)
	}
	res, body = o.post("/console/login", url.Values{"token": {strings.Repeat("0", 64)}})
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(body, "wrong token") || len(res.Cookies()) > 0 {
		t.Errorf("wrong token: %s %v", res.Status, res.Cookies())
	}
	res, _ = o.post("/console/login", url.Values{"token": {token}}, "Sec-Fetch-Site", "cross-site")
	if res.StatusCode != http.StatusForbidden || len(res.Cookies()) > 0 {
		t.Errorf("a cross-site sign-in: %s", res.Status)
	}
	// Pasted with api.token's newline, the token is still the token.
	res, _ = o.post("/console/login", url.Values{"token": {token + "\n"}})
	cs := res.Cookies()
	if res.StatusCode != http.StatusSeeOther || len(cs) != 1 {
		t.Fatalf("sign in: %s %v", res.Status, cs)
	}
	c := cs[0]
	if c.Name != console.CookieName || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/console/" ||
		c.MaxAge <= 0 || c.MaxAge > int(console.DefaultSessionTTL.Seconds()) || strings.Contains(c.Value, token) {
		t.Errorf("session cookie: %+v", c)
	}
}

func apiUnchanged(t *testing.T, base, token string) {
	cl := newClient(t)
	res, err := cl.Get(base + "/metrics")
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("/metrics without a token: %v %v", err, res.Status)
	}
	res.Body.Close()
	res, err = cl.Get(base + "/status")
	if err != nil || res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("/status without a token: %v %v", err, res.Status)
	}
	res.Body.Close()
	req, _ := http.NewRequest(http.MethodGet, base+"/status", nil)
	req.Header.Set("Authorization", "Bearer "+token)
	if res, err = cl.Do(req); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("/status with the token: %v %v", err, res.Status)
	}
	res.Body.Close()
}

func crossSiteRefused(t *testing.T, o *operator, id string) {
	path := "/console/jobs/" + id + "/approve"
	for _, c := range []struct {
		why    string
		form   url.Values
		header []string
	}{
		{"no CSRF token", url.Values{}, nil},
		{"a wrong CSRF token", url.Values{"csrf": {strings.Repeat("0", 64)}}, nil},
		{"another site", url.Values{"csrf": {o.csrf}}, []string{"Sec-Fetch-Site", "cross-site"}},
		{"another origin", url.Values{"csrf": {o.csrf}}, []string{"Origin", "http://attacker.example"}},
	} {
		if res, _ := o.post(path, c.form, c.header...); res.StatusCode != http.StatusForbidden {
			t.Errorf("approve with %s: %s", c.why, res.Status)
		}
	}
}

// exportsMatchLedger checks the exports against audit.Summarize of the
// ledger file, read apart from the console.
func exportsMatchLedger(t *testing.T, o *operator, dataDir string) {
	entries, err := audit.ReadFile(filepath.Join(dataDir, "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := audit.Summarize(entries)
	if len(want) == 0 {
		t.Fatal("the ledger has no message")
	}
	res, body := o.get("/console/disclosures.csv")
	if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Disposition"), "attachment") {
		t.Fatalf("CSV export: %s", res.Status)
	}
	recs, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil || len(recs) < 1 || strings.Join(recs[0], ",") != "job,peer,disclosure,messages,bytes" {
		t.Fatalf("CSV export: %v\n%s", err, body)
	}
	var got []audit.Row
	for _, r := range recs[1:] {
		m, _ := strconv.Atoi(r[3])
		b, _ := strconv.ParseInt(r[4], 10, 64)
		got = append(got, audit.Row{Job: r[0], Peer: r[1], Disclosure: r[2], Messages: m, Bytes: b})
	}
	sortRows(got)
	if !slices.Equal(got, want) {
		t.Fatalf("CSV export\n%v\nledger\n%v", got, want)
	}
	_, body = o.get("/console/disclosures.jsonl?peer=org1")
	got = nil
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		var r audit.Row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("JSON lines export: %v: %s", err, sc.Text())
		}
		got = append(got, r)
	}
	sortRows(got)
	want = slices.DeleteFunc(want, func(r audit.Row) bool { return r.Peer != "org1" })
	if !slices.Equal(got, want) {
		t.Fatalf("JSON lines export for org1\n%v\nledger\n%v", got, want)
	}
}

func sortRows(rs []audit.Row) {
	slices.SortFunc(rs, func(a, b audit.Row) int {
		return strings.Compare(a.Job+"\x00"+a.Peer+"\x00"+a.Disclosure, b.Job+"\x00"+b.Peer+"\x00"+b.Disclosure)
	})
}

var (
	inlineScript  = regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]`)
	inlineHandler = regexp.MustCompile(`\son[a-z]+=`)
	inlineStyle   = regexp.MustCompile(`\sstyle=`)
)

// everyPage checks that each page answers, with no inline script or
// style (the Content-Security-Policy would block them).
func everyPage(t *testing.T, o *operator, id string) {
	for _, p := range []string{"/console/jobs", "/console/jobs?state=done", "/console/jobs?kind=sum&page=2", "/console/jobs/" + id,
		"/console/disclosures", "/console/disclosures?peer=org1&disclosure=ciphertext", "/console/approvals",
		"/console/consortium", "/console/node"} {
		res, body := o.get(p)
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %s\n%s", p, res.Status, body)
			continue
		}
		if inlineScript.MatchString(body) || inlineHandler.MatchString(body) || inlineStyle.MatchString(body) {
			t.Errorf("GET %s: inline script or style", p)
		}
		if res.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("GET %s: Cache-Control %q", p, res.Header.Get("Cache-Control"))
		}
	}
	if res, _ := o.get("/console/jobs/nope"); res.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown job: %s", res.Status)
	}
	_, body := o.get("/console/node")
	keys, err := keyring.LoadPaillier(o.dataDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{hex.EncodeToString(keys.Public().KeyID[:]), "dealt (cohort keys deal)", "any 2 of the 3 members", "audit.jsonl", "raft/"} {
		if !strings.Contains(body, want) {
			t.Errorf("the node page lacks %q", want)
		}
	}
	_, body = o.get("/console/consortium")
	for _, want := range []string{"org1", "org2", "connected", "leader"} {
		if !strings.Contains(body, want) {
			t.Errorf("the consortium page lacks %q", want)
		}
	}
}
