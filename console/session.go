package console

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Sessions. An operator signs in with the node's API token, typed into a
// form and sent in a POST body, never in a URL. The console answers with a
// random session id in an HttpOnly, SameSite=Strict cookie scoped to the
// console's path, which expires with the session; the node keeps only a
// hash of the id, in memory, so a restart signs everyone out. Every
// state-changing request must come from the console's own pages (the
// browser's Sec-Fetch-Site and Origin, checked by
// http.CrossOriginProtection) and carry the session's CSRF token, a second
// random value that only the console's pages contain.

// CookieName is the session cookie.
const CookieName = "cohort_console"

// maxSessions bounds the sessions kept; signing in beyond it ends the
// one closest to expiry.
const maxSessions = 64

type session struct {
	csrf    string
	expires time.Time
}

// checkCSRF reports whether a request carries the session's CSRF token, in
// the form field "csrf" or the header X-CSRF-Token.
func (s *session) checkCSRF(r *http.Request) bool {
	got := r.Header.Get("X-CSRF-Token")
	if got == "" {
		got = r.PostFormValue("csrf")
	}
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.csrf)) == 1
}

type sessions struct {
	ttl time.Duration
	mu  sync.Mutex
	// byHash holds sessions by the SHA-256 of their id: a lookup's timing
	// tells nothing of the ids kept.
	byHash map[[32]byte]*session
}

func newSessions(ttl time.Duration) *sessions {
	return &sessions{ttl: ttl, byHash: map[[32]byte]*session{}}
}

func randomHex() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// create starts a session and returns its id.
func (ss *sessions) create(now time.Time) (string, *session, error) {
	id, err := randomHex()
	if err != nil {
		return "", nil, err
	}
	csrf, err := randomHex()
	if err != nil {
		return "", nil, err
	}
	s := &session{csrf: csrf, expires: now.Add(ss.ttl)}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for k, old := range ss.byHash {
		if !now.Before(old.expires) {
			delete(ss.byHash, k)
		}
	}
	for len(ss.byHash) >= maxSessions {
		var first [32]byte
		var at time.Time
		for k, old := range ss.byHash {
			if at.IsZero() || old.expires.Before(at) {
				first, at = k, old.expires
			}
		}
		delete(ss.byHash, first)
	}
	ss.byHash[sha256.Sum256([]byte(id))] = s
	return id, s, nil
}

func (ss *sessions) lookup(id string, now time.Time) (*session, bool) {
	k := sha256.Sum256([]byte(id))
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s, ok := ss.byHash[k]
	if ok && !now.Before(s.expires) {
		delete(ss.byHash, k)
		return nil, false
	}
	return s, ok
}

func (ss *sessions) end(id string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.byHash, sha256.Sum256([]byte(id)))
}

// session returns the request's session, if it has a live one.
func (c *Console) session(r *http.Request) (*session, bool) {
	ck, err := r.Cookie(CookieName)
	if err != nil || ck.Value == "" {
		return nil, false
	}
	return c.sessions.lookup(ck.Value, time.Now())
}

func (c *Console) setCookie(w http.ResponseWriter, r *http.Request, value string, expires time.Time) {
	ck := &http.Cookie{Name: CookieName, Value: value, Path: Prefix, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil}
	if value == "" {
		ck.MaxAge = -1
	} else {
		ck.Expires, ck.MaxAge = expires, int(time.Until(expires).Seconds())
	}
	http.SetCookie(w, ck)
}

type loginData struct {
	Error string
}

func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if _, ok := c.session(r); ok {
		http.Redirect(w, r, Prefix+"jobs", http.StatusSeeOther)
		return
	}
	c.render(w, http.StatusOK, &view{page: "login", title: "Sign in", data: loginData{}}, nil)
}

// signIn checks the token typed into the sign-in form. A wrong one is
// refused with 401 and the API's words.
func (c *Console) signIn(w http.ResponseWriter, r *http.Request) {
	if err := c.cop.Check(r); err != nil {
		c.render(w, http.StatusForbidden, &view{page: "login", title: "Sign in",
			data: loginData{Error: "refused: a cross-origin sign-in"}}, nil)
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	// A token pasted with the newline of api.token, or a space, is still the token.
	tok := strings.TrimSpace(r.PostFormValue("token"))
	want := c.node.APIToken()
	if tok == "" || want == "" || subtle.ConstantTimeCompare([]byte(tok), []byte(want)) != 1 {
		msg := "wrong token: use the one in the node's DATA_DIR/api.token (cohort node token)"
		if tok == "" {
			msg = "missing token: paste the one in the node's DATA_DIR/api.token (cohort node token)"
		}
		c.render(w, http.StatusUnauthorized, &view{page: "login", title: "Sign in", data: loginData{Error: msg}}, nil)
		return
	}
	id, s, err := c.sessions.create(time.Now())
	if err != nil {
		c.renderError(w, r, nil, http.StatusInternalServerError, errors.New("cannot start a session: "+err.Error()))
		return
	}
	c.setCookie(w, r, id, s.expires)
	http.Redirect(w, r, Prefix+"jobs", http.StatusSeeOther)
}

func (c *Console) signOut(w http.ResponseWriter, r *http.Request, _ *session) {
	if ck, err := r.Cookie(CookieName); err == nil {
		c.sessions.end(ck.Value)
	}
	c.setCookie(w, r, "", time.Time{})
	http.Redirect(w, r, Prefix+"login", http.StatusSeeOther)
}
