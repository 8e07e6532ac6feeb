package console_test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/sum"
)

// The tests run the console on real in-process nodes (package sim): three
// organisations, a dealt 1024-bit threshold key, the sum job, and org3's
// policy asking a person to approve each job. Each node's HTTP handler
// (node.Handler, which mounts the console) is served on loopback.

var names = []string{"org1", "org2", "org3"}

// approver is the node whose policy asks a person to approve every job.
const approver = "org3"

// The consortium and the key-cache test deal 1024-bit keys, which paillier
// accepts only in test binaries that opt in.
func init() { testkit.SmallKeys() }

type consortium struct {
	c    *sim.Cluster
	spec []byte
	srv  map[string]*httptest.Server
}

func startConsortium(t testing.TB, ctx context.Context) *consortium {
	t.Helper()
	dir := t.TempDir()
	var spec strings.Builder
	spec.WriteString("kind: sum\nparties:\n")
	for i, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n+".csv"), fmt.Appendf(nil, "v\n%d\n%d\n", i+1, 10*(i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&spec, "  - name: %s\n    tables: [{name: t, path: %s.csv}]\n", n, n)
	}
	spec.WriteString("params: {column: v}\n")
	c := simtest.StartCluster(t, ctx, names, sim.ClusterOptions{
		Kinds: job.Registry{"sum": sum.Kind{}}, TablesDir: dir, Setup: dealtKeys,
		PolicyFor: func(name string) *policy.Policy {
			p := policy.Default()
			// Each organisation bounds its dataset's v, so that it can be
			// noised (noisedSpec's sensitivity 30 covers them).
			p.Tables = map[string]policy.TableRules{name + ".csv": {Bounds: map[string][2]float64{"v": {0, 30}}}}
			if name == approver {
				p.Approval = policy.ApprovalManual
			}
			return p
		},
	})
	k := &consortium{c: c, spec: []byte(spec.String()), srv: map[string]*httptest.Server{}}
	t.Cleanup(func() {
		for _, s := range k.srv {
			s.Close()
		}
		c.Close()
	})
	for _, n := range names {
		k.srv[n] = httptest.NewServer(c.Node(n).Handler())
	}
	return k
}

// dealtKeys deals a 1024-bit threshold key and records how it was made,
// as `cohort keys deal` does.
func dealtKeys(names []string) (func(name, dataDir string) error, error) {
	install, err := simtest.ThresholdKeys(1024)(names)
	if err != nil {
		return nil, err
	}
	return func(name, dataDir string) error {
		if err := install(name, dataDir); err != nil {
			return err
		}
		keys, err := keyring.LoadPaillier(dataDir)
		if err != nil {
			return err
		}
		pk := keys.Public()
		b, err := json.Marshal(keyring.Info{Made: keyring.MadeDealer, KeyID: hex.EncodeToString(pk.KeyID[:]), Bits: pk.N.BitLen(),
			Parties: keys.Members, Threshold: pk.Threshold + 1})
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dataDir, keyring.PaillierInfoFile), b, 0o644)
	}, nil
}

// httptestServer serves a node's HTTP handler on loopback.
func httptestServer(tb testing.TB, n *node.Node) string {
	s := httptest.NewServer(n.Handler())
	tb.Cleanup(s.Close)
	return s.URL
}

// submit submits the sum job through org1 and waits until it awaits
// org3's approval.
func (k *consortium) submit(t testing.TB, ctx context.Context) string {
	t.Helper()
	return k.submitSpec(t, ctx, k.spec)
}

// noisedSpec is the sum job with Laplace noise of ε 0.25 per column.
func (k *consortium) noisedSpec() []byte {
	return []byte(strings.Replace(string(k.spec), "params: {column: v}",
		"params: {column: v, noise: {mechanism: laplace, epsilon: 0.25, sensitivity: 30}}", 1))
}

// submitSpec submits a job through org1 and waits until it awaits org3's
// approval.
func (k *consortium) submitSpec(t testing.TB, ctx context.Context, spec []byte) string {
	t.Helper()
	id, err := k.c.Node("org1").Submit(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, ctx, "job "+id+" to await "+approver, func() bool {
		js, ok := k.c.Node(approver).Job(id)
		return ok && js.Status == node.StatusAwaiting
	})
	return id
}

func waitFor(t testing.TB, ctx context.Context, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// operator is a signed-in HTTP client of one node's console.
type operator struct {
	t       testing.TB
	base    string
	client  *http.Client
	csrf    string
	dataDir string // the node's, for checks apart from the console
}

var csrfField = regexp.MustCompile(`name="csrf" value="([0-9a-f]+)"`)

func newClient(t testing.TB) *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func signIn(t testing.TB, base, token string) *operator {
	t.Helper()
	o := &operator{t: t, base: base, client: newClient(t)}
	res, _ := o.post("/console/login", url.Values{"token": {token}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign in: %s", res.Status)
	}
	_, body := o.get("/console/jobs")
	m := csrfField.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no CSRF token on the jobs page:\n%s", body)
	}
	o.csrf = m[1]
	return o
}

func (o *operator) get(path string) (*http.Response, string) {
	o.t.Helper()
	req, err := http.NewRequest(http.MethodGet, o.base+path, nil)
	if err != nil {
		o.t.Fatal(err)
	}
	return o.do(req)
}

// do sends a request and reads the whole answer.
func (o *operator) do(req *http.Request) (*http.Response, string) {
	o.t.Helper()
	res, err := o.client.Do(req)
	if err != nil {
		o.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		o.t.Fatal(err)
	}
	return res, string(b)
}

// post sends a form as the console's own pages do (no Origin header: a
// client that is not a browser).
func (o *operator) post(path string, form url.Values, header ...string) (*http.Response, string) {
	o.t.Helper()
	req, err := http.NewRequest(http.MethodPost, o.base+path, strings.NewReader(form.Encode()))
	if err != nil {
		o.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return o.do(req)
}
