package node

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// TokenFile is the HTTP API's bearer token inside a node's data dir (mode
// 0600). `cohort node init` writes it; a node whose data dir predates it
// writes one when it starts.
const TokenFile = "api.token"

// tokenBytes is the token's entropy: 32 random bytes, written as 64 hex digits.
const tokenBytes = 32

// LoadToken reads the API token from a data dir.
func LoadToken(dataDir string) (string, error) {
	path := filepath.Join(dataDir, TokenFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("API token %s: %w", path, err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) != 2*tokenBytes {
		return "", fmt.Errorf("API token %s: %d characters, want %d hex digits (delete it and restart the node to make a new one)", path, len(tok), 2*tokenBytes)
	}
	if _, err := hex.DecodeString(tok); err != nil {
		return "", fmt.Errorf("API token %s: not hex: %w", path, err)
	}
	return tok, nil
}

// ensureToken returns the data dir's API token, creating it (0600) if the
// file does not exist yet.
func ensureToken(dataDir string) (string, error) {
	tok, err := LoadToken(dataDir)
	if !errors.Is(err, fs.ErrNotExist) {
		return tok, err
	}
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("generate API token: %w", err)
	}
	tok = hex.EncodeToString(b)
	if err := writeFileAtomic(filepath.Join(dataDir, TokenFile), []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write API token: %w", err)
	}
	return tok, nil
}

// requireToken wraps the API: every request but GET /metrics (Prometheus
// scrapers carry no secret, and metrics disclose no job data) must carry
// "Authorization: Bearer TOKEN".
func requireToken(token string, next http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
			next.ServeHTTP(w, r)
			return
		}
		got := r.Header.Get("Authorization")
		if got == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cohort"`)
			writeError(w, http.StatusUnauthorized, fmt.Errorf("missing bearer token: send 'Authorization: Bearer TOKEN', the token in the node's DATA_DIR/%s", TokenFile))
			return
		}
		if subtle.ConstantTimeCompare([]byte(got), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="cohort", error="invalid_token"`)
			writeError(w, http.StatusUnauthorized, fmt.Errorf("wrong bearer token: use the one in the node's DATA_DIR/%s", TokenFile))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// APIToken is the bearer token the node's HTTP API requires.
func (n *Node) APIToken() string { return n.token }
