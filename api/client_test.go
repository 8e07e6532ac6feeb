package api

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
)

func TestParseBase(t *testing.T) {
	for in, want := range map[string]string{
		"127.0.0.1:8080":           "http://127.0.0.1:8080",
		"http://node.example:80/":  "http://node.example:80",
		"https://node.example:443": "https://node.example:443",
	} {
		if got, err := ParseBase(in); err != nil || got != want {
			t.Errorf("ParseBase(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "ftp://x:1", "http://", "http://x:1/?q=1", "http://x:1/#f"} {
		if _, err := ParseBase(in); err == nil {
			t.Errorf("ParseBase(%q) accepted", in)
		}
	}
}

// TestDo: the token goes as a bearer token, the node's {"error": ...}
// comes back as the error's text, a refused token as ErrUnauthorized and a
// node that is not there as ErrUnreachable.
func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer s3" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		switch r.URL.Path {
		case "/v1/jobs":
			_ = json.NewEncoder(w).Encode(map[string]string{"id": "j-1"})
		default:
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": "no job j-2"})
		}
	}))
	defer srv.Close()
	ctx := context.Background()
	c, err := NewHTTPClient(srv.URL, "s3")
	if err != nil {
		t.Fatal(err)
	}
	if id, err := c.Submit(ctx, []byte("kind: sum")); err != nil || id != "j-1" {
		t.Errorf("Submit = %q, %v", id, err)
	}
	if _, err := c.Job(ctx, "j-2"); err == nil || err.Error() != "no job j-2" {
		t.Errorf("Job: %v, want the node's error", err)
	}
	bad, _ := NewHTTPClient(srv.URL, "wrong")
	if _, err := bad.Status(ctx); !errors.Is(err, ErrUnauthorized) {
		t.Errorf("Status with a wrong token: %v", err)
	}
	srv.Close()
	if _, err := c.Status(ctx); !errors.Is(err, ErrUnreachable) {
		t.Errorf("Status of a stopped node: %v", err)
	}
}

// A JobQuery survives its query string, JobsPage sends it, and the node's
// parser refuses what it cannot serve.
func TestJobQuery(t *testing.T) {
	for _, q := range []JobQuery{{Limit: DefaultJobPage}, {Kind: "sum", Status: StatusDone, Offset: 200, Limit: 50}, {Status: StatusRunning, Limit: MaxJobPage}} {
		got, err := ParseJobQuery(q.Values())
		if err != nil || got != q {
			t.Errorf("%+v came back as %+v, %v", q, got, err)
		}
	}
	var sent string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sent = r.URL.String()
		w.Write([]byte("[]"))
	}))
	defer srv.Close()
	c, err := NewHTTPClient(srv.URL, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.JobsPage(context.Background(), JobQuery{Status: StatusFailed, Offset: 10, Limit: 5}); err != nil {
		t.Fatal(err)
	}
	if want := "/v1/jobs?limit=5&offset=10&status=failed"; sent != want {
		t.Errorf("sent %s, want %s", sent, want)
	}
	for _, v := range []string{"status=queued", "limit=0", "limit=1001", "offset=-1", "limit=ten"} {
		vals, _ := url.ParseQuery(v)
		if _, err := ParseJobQuery(vals); err == nil {
			t.Errorf("%s accepted", v)
		}
	}
}
