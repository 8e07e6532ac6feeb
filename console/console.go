package console

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/cohortdm/cohort/api"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
)

// Node is what the console needs of the node it serves: what the node
// holds, and the two decisions an operator takes there. Package node
// implements it; every method must be safe for concurrent use.
type Node interface {
	// Name is the node's party name.
	Name() string
	// Status is the node's state, as /status reports it.
	Status() api.Status
	// JobKinds, FinishedCounts, FinishedJobs and RunningJobs page the
	// jobs without copying records: every kind in the log; the finished
	// jobs of a kind ("" any) per status; a page of their ids of one
	// status ("" any), newest first; the running ones. Job returns one
	// whole.
	JobKinds() []string
	FinishedCounts(kind string) map[string]int
	FinishedJobs(kind, status string, offset, limit int) []string
	RunningJobs(kind string) []string
	Job(id string) (*Job, bool)
	// JobsChanged returns a channel closed at the next change of the jobs.
	JobsChanged() <-chan struct{}
	// Uses says what a job would disclose of this node's data, as its
	// kind declares it.
	Uses(id string) ([]job.Use, error)
	// Policy is the policy in force with the budget spent and left.
	Policy() (*policy.Show, error)
	// Decision is this node's latest policy decision on a job.
	Decision(id string) (policy.Decision, bool)
	// Approve and Reject decide a job that awaits this node's approval.
	Approve(ctx context.Context, id string) error
	Reject(ctx context.Context, id, reason string) error
	// Consortium is the membership as this node sees it.
	Consortium() Consortium
	// APIToken is the token an operator signs in with.
	APIToken() string
	// Done is closed when the node stops; live streams end then.
	Done() <-chan struct{}
}

// Job is one job as the console shows it: the API's view of it, and what
// the operator's own node holds of it that the API does not serve.
type Job struct {
	*api.JobStatus
	Spec, Result []byte
	// Coordinators names each step's coordinator as the log has it, one
	// per entry of Steps ("" where the log has none).
	Coordinators []string
}

// Consortium is the membership as one node sees it.
type Consortium struct {
	Members []Member
	// Role is this node's Raft state; Leader the coordinator ("" while
	// there is none); Voters the members that vote.
	Role, Leader string
	Voters       []string
	// LeaderContact is when this node, a follower, last heard from the
	// leader (zero when it leads or never has).
	LeaderContact time.Time
	// Events are the leader and membership changes this node has seen
	// since it started, oldest first.
	Events []Event
}

// Member is one consortium member and its health as this node sees it.
type Member struct {
	api.Member
	Self, Voter, Leader bool
	// Connected reports a live connection; Since is when it opened, or,
	// when there is none, when the last one closed (zero: never connected).
	Connected bool
	Since     time.Time
	// HeartbeatFailing is set, on the leader, while Raft's heartbeats to
	// the member fail; LastContact is then the last reply.
	HeartbeatFailing bool
	LastContact      time.Time
}

// Event is a change in the consortium this node has seen.
type Event struct {
	Time time.Time
	What string
	// LeaderChange marks the events that say who leads from Time on:
	// Leader, or no one when it is "".
	LeaderChange bool
	Leader       string
}

// Options are where the console finds what the node keeps in files.
type Options struct {
	// DataDir holds the key files; its use is shown.
	DataDir string
	// LedgerPath is the node's audit ledger (JSON lines).
	LedgerPath string
	// Warnings are the node's recent warnings (nil: none kept).
	Warnings *Warnings
	// SessionTTL is how long a sign-in lasts (default DefaultSessionTTL).
	SessionTTL time.Duration
	// Version is the release the binary was linked as ("": the module
	// version from the build info, or "devel"), as `cohort version` shows it.
	Version string
	// Preload reads the data dir's use and the key's status in New, so that
	// no node view pays for loading the key (about 0.1 s for 2048 bits): for
	// a node that serves the console on an HTTP listener.
	Preload bool
}

// DefaultSessionTTL is how long a sign-in lasts by default.
const DefaultSessionTTL = 8 * time.Hour

// Prefix is where the node mounts the console.
const Prefix = "/console/"

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Console serves one node's console. Make it with New.
type Console struct {
	node     Node
	opts     Options
	started  time.Time
	pages    map[string]*template.Template
	assets   map[string]asset
	sessions *sessions
	ledger   *ledgerIndex
	files    *fileCache
	cop      *http.CrossOriginProtection
	mux      *http.ServeMux
}

// asset is one embedded static file with its content hash, which its URL
// carries so that a browser may cache it.
type asset struct {
	body  []byte
	ctype string
	hash  string
}

// New returns the console of a node.
func New(n Node, o Options) (*Console, error) {
	if o.SessionTTL <= 0 {
		o.SessionTTL = DefaultSessionTTL
	}
	c := &Console{node: n, opts: o, started: time.Now(), sessions: newSessions(o.SessionTTL),
		ledger: newLedgerIndex(o.LedgerPath), files: newFileCache(o.DataDir), cop: http.NewCrossOriginProtection()}
	var err error
	if c.assets, err = loadAssets(); err != nil {
		return nil, err
	}
	if c.pages, err = c.parsePages(); err != nil {
		return nil, err
	}
	c.mux = c.routes()
	if o.Preload {
		c.files.refresh()
	}
	return c, nil
}

func loadAssets() (map[string]asset, error) {
	out := map[string]asset{}
	types := map[string]string{".css": "text/css; charset=utf-8", ".js": "text/javascript; charset=utf-8", ".svg": "image/svg+xml"}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		out[path.Base(p)] = asset{body: b, ctype: types[path.Ext(p)], hash: hex.EncodeToString(sum[:6])}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("console: static files: %w", err)
	}
	return out, nil
}

// parsePages parses each page's template with the layout and the charts.
func (c *Console) parsePages() (map[string]*template.Template, error) {
	funcs := template.FuncMap{
		"asset": func(name string) string { return Prefix + "static/" + name + "?v=" + c.assets[name].hash },
		"bytes": humanBytes, "when": when, "ago": ago, "dur": duration, "short": short, "join": strings.Join,
		"num": func(n any) string {
			switch v := n.(type) {
			case int:
				return thousands(int64(v))
			case int64:
				return thousands(v)
			}
			return fmt.Sprint(n)
		},
	}
	base, err := template.New("").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/charts.html")
	if err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	pages := map[string]*template.Template{}
	for _, p := range []string{"login", "jobs", "job", "disclosures", "approvals", "consortium", "node", "error"} {
		t, err := base.Clone()
		if err == nil {
			t, err = t.ParseFS(templateFS, "templates/"+p+".html")
		}
		if err != nil {
			return nil, fmt.Errorf("console: template %s: %w", p, err)
		}
		pages[p] = t
	}
	return pages, nil
}

// ServeHTTP serves the console under Prefix.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	// Scripts and styles come from this console only, nothing inline, no
	// frames, forms post here only.
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "+
		"connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cross-Origin-Opener-Policy", "same-origin")
	h.Set("Cross-Origin-Resource-Policy", "same-origin")
	c.mux.ServeHTTP(w, r)
}

func (c *Console) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /console/static/{name}", c.serveAsset)
	mux.HandleFunc("GET /console/login", c.loginPage)
	mux.HandleFunc("POST /console/login", c.signIn)
	mux.HandleFunc("POST /console/logout", c.post(c.signOut))
	mux.HandleFunc("GET /console/{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"jobs", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /console/jobs", c.page(c.jobsPage))
	mux.HandleFunc("GET /console/jobs/{id}", c.page(c.jobPage))
	mux.HandleFunc("GET /console/jobs/{id}/result.json", c.get(c.jobResult))
	mux.HandleFunc("POST /console/jobs/{id}/approve", c.post(c.approve))
	mux.HandleFunc("POST /console/jobs/{id}/reject", c.post(c.reject))
	mux.HandleFunc("GET /console/disclosures", c.page(c.disclosuresPage))
	mux.HandleFunc("GET /console/disclosures.csv", c.get(c.exportCSV))
	mux.HandleFunc("GET /console/disclosures.jsonl", c.get(c.exportJSONL))
	mux.HandleFunc("GET /console/approvals", c.page(c.approvalsPage))
	mux.HandleFunc("GET /console/consortium", c.page(c.consortiumPage))
	mux.HandleFunc("GET /console/node", c.page(c.nodePage))
	mux.HandleFunc("GET /console/events", c.get(c.events))
	mux.HandleFunc("/console/", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := c.session(r); !ok {
			c.refuse(w, r)
			return
		}
		c.renderError(w, r, nil, http.StatusNotFound, errors.New("no such page"))
	})
	return mux
}

func (c *Console) serveAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := c.assets[r.PathValue("name")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.ctype)
	if r.URL.Query().Get("v") == a.hash {
		w.Header().Set("Cache-Control", "max-age=86400, immutable")
	} else {
		w.Header().Set("Cache-Control", "no-cache")
	}
	w.Write(a.body)
}

// view is what a page handler returns: the template and its data.
type view struct {
	page  string
	title string
	nav   string
	// live pages subscribe to the node's changes and refresh their
	// data-live parts in place.
	live bool
	data any
}

// pageData is what every page's template gets.
type pageData struct {
	Title, Nav, Node, CSRF string
	Signed, Live           bool
	Data                   any
}

// errNotFound makes a page answer 404.
var errNotFound = errors.New("not found")

// page serves a page to a signed-in operator.
func (c *Console) page(h func(r *http.Request) (*view, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := c.session(r)
		if !ok {
			c.refuse(w, r)
			return
		}
		v, err := h(r)
		if err != nil {
			code := http.StatusInternalServerError
			if errors.Is(err, errNotFound) {
				code = http.StatusNotFound
			}
			c.renderError(w, r, s, code, err)
			return
		}
		c.render(w, http.StatusOK, v, s)
	}
}

// get serves a non-page answer (a download, a stream) to a signed-in operator.
func (c *Console) get(h func(w http.ResponseWriter, r *http.Request, s *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := c.session(r)
		if !ok {
			c.refuse(w, r)
			return
		}
		h(w, r, s)
	}
}

// post serves a state-changing request: signed in, from this console's
// own pages (the browser's Origin and Sec-Fetch-Site), carrying the
// session's CSRF token.
func (c *Console) post(h func(w http.ResponseWriter, r *http.Request, s *session)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s, ok := c.session(r)
		if !ok {
			c.refuse(w, r)
			return
		}
		if err := c.cop.Check(r); err != nil {
			c.renderError(w, r, s, http.StatusForbidden, fmt.Errorf("refused: a cross-origin request (%v)", err))
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, 16<<10)
		if !s.checkCSRF(r) {
			c.renderError(w, r, s, http.StatusForbidden, errors.New("refused: the form's CSRF token is missing or stale; reload the page"))
			return
		}
		h(w, r, s)
	}
}

// render writes a page whole, so an error never leaves half a page.
func (c *Console) render(w http.ResponseWriter, code int, v *view, s *session) {
	d := pageData{Title: v.title, Nav: v.nav, Node: c.node.Name(), Live: v.live, Data: v.data}
	if s != nil {
		d.Signed, d.CSRF = true, s.csrf
	}
	var b bytes.Buffer
	if err := c.pages[v.page].ExecuteTemplate(&b, "layout", d); err != nil {
		http.Error(w, "console: render "+v.page+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	w.Write(b.Bytes())
}

func (c *Console) renderError(w http.ResponseWriter, r *http.Request, s *session, code int, err error) {
	c.render(w, code, &view{page: "error", title: http.StatusText(code), data: struct {
		Code    int
		Message string
	}{code, err.Error()}}, s)
}

// refuse answers a request without a valid session: a page asks the
// browser to sign in, anything else is 401.
func (c *Console) refuse(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodGet && r.Header.Get("X-Console-Live") == "" && !strings.HasSuffix(r.URL.Path, "/events") {
		http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	http.Error(w, "not signed in: sign in at "+Prefix+"login with the node's API token", http.StatusUnauthorized)
}
