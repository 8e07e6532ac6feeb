package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keygen"
)

// keys deal: only the documented modulus sizes, no threshold that lets one
// member decrypt alone, no silent overwrite, and one meaning of threshold
// (members needed to decrypt) in the text, the JSON and the flag.
func TestKeysDeal(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	out := t.TempDir()
	if _, stderr, err := run(t, bin, "keys", "deal", "--members", "a,b,c", "--bits", "1024", "--out", out); err == nil || !strings.Contains(stderr, "2048, 3072 or 4096") {
		t.Errorf("--bits 1024: err %v, stderr %q", err, stderr)
	}
	for _, args := range [][]string{
		{"--members", "a,b"},
		{"--members", "a,b,c", "--threshold", "1"},
		{"--members", "a,b,c", "--threshold", "4"},
		{"--members", "a,b c"},
	} {
		if _, stderr, err := run(t, bin, append([]string{"keys", "deal", "--out", out}, args...)...); err == nil {
			t.Errorf("keys deal %v succeeded: %q", args, stderr)
		}
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("refused deals wrote %v", entries)
	}
	// The deal of a,b,c into an empty --out (shared with TestKeysStatus),
	// copied here to be dealt over.
	d := dealABC(t)
	var res struct {
		Threshold, Parties, Bits int
		Members                  []string
	}
	if d.err != nil || json.Unmarshal([]byte(d.stdout), &res) != nil || res.Threshold != 2 || res.Parties != 3 || res.Bits != 2048 {
		t.Fatalf("deal a,b,c: %v %q %q; want threshold 2 (any 2 of 3 decrypt)", d.err, d.stdout, d.stderr)
	}
	if err := os.CopyFS(out, os.DirFS(d.dir)); err != nil {
		t.Fatal(err)
	}
	share := filepath.Join(out, "a", "keys", "threshold.share")
	before, err := os.ReadFile(share)
	if err != nil {
		t.Fatal(err)
	}
	// Refused for the existing shares, which deal checks after the
	// threshold: the refusal names --force, not --threshold, so every
	// member needed (3 of 3) is a threshold deal accepts.
	if _, stderr, err := run(t, bin, "keys", "deal", "--members", "a,b,c", "--threshold", "3", "--out", out); err == nil || !strings.Contains(stderr, "--force") {
		t.Errorf("second deal over existing shares: err %v, stderr %q", err, stderr)
	}
	if after, _ := os.ReadFile(share); !bytes.Equal(before, after) {
		t.Error("a refused deal changed a share")
	}
	// Over two members both must be needed, and saying so is allowed: the
	// one 2048-bit deal of this test (a safe-prime search of seconds) is
	// that deal, over a's existing share with --force.
	stdout, stderr, err := run(t, bin, "keys", "deal", "--members", "a,b", "--out", out, "--force", "--threshold", "2")
	if err != nil || !strings.Contains(stdout, "threshold 2, any 2 of the 2 members") {
		t.Errorf("deal a,b --force --threshold 2: %v %q %q", err, stdout, stderr)
	}
	if after, _ := os.ReadFile(share); bytes.Equal(before, after) {
		t.Error("--force did not replace the share")
	}
}

// dealtABC is one `keys deal --members a,b,c --format json` into an empty
// directory, which TestKeysDeal and TestKeysStatus both read (a 2048-bit
// deal is a safe-prime search of seconds); neither changes it.
type dealtABC struct {
	dir, stdout, stderr string
	err                 error
}

var abc struct {
	once sync.Once
	deal dealtABC
}

func dealABC(t *testing.T) dealtABC {
	t.Helper()
	bin := buildBinary(t)
	abc.once.Do(func() {
		d := &abc.deal
		if d.dir, d.err = os.MkdirTemp(built.dir, "keys-abc-"); d.err == nil {
			d.stdout, d.stderr, d.err = run(t, bin, "keys", "deal", "--members", "a,b,c", "--out", d.dir, "--format", "json")
		}
	})
	return abc.deal
}

// keys status shows what keys deal installed, and that a dealer made it.
func TestKeysStatus(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	if _, stderr, err := run(t, bin, "keys", "status", "--dir", t.TempDir()); err == nil || !strings.Contains(stderr, "no threshold key") {
		t.Errorf("status without a key: %v %q", err, stderr)
	}
	d := dealABC(t)
	if d.err != nil {
		t.Fatalf("deal: %v %q", d.err, d.stderr)
	}
	out := d.dir
	stdout, stderr, err := run(t, bin, "keys", "status", "--dir", filepath.Join(out, "b"), "--format", "json")
	var st struct {
		KeyID     string `json:"key_id"`
		Bits      int
		Threshold int
		Index     int
		Made      string
		Parties   []string
	}
	if err != nil || json.Unmarshal([]byte(stdout), &st) != nil {
		t.Fatalf("status: %v %q %q", err, stdout, stderr)
	}
	if st.Made != "dealer" || st.Bits != 2048 || st.Threshold != 2 || st.Index != 2 || len(st.KeyID) != 64 || len(st.Parties) != 3 {
		t.Fatalf("status %+v", st)
	}
	stdout, _, err = run(t, bin, "keys", "status", "--dir", filepath.Join(out, "a"))
	if err != nil || !strings.Contains(stdout, "made: dealer") || !strings.Contains(stdout, "any 2 of the 3 members") {
		t.Fatalf("status text: %v %q", err, stdout)
	}
}

// keys generate refuses a consortium of two (no honest majority) and a
// size other than 2048, 3072 or 4096, before it contacts the node.
func TestKeysGenerateRefuses(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t)
	root := t.TempDir()
	var members []map[string]any
	for _, name := range []string{"north", "south"} {
		out, stderr, err := run(t, bin, "node", "init", "--name", name, "--dir", filepath.Join(root, name), "--format", "json")
		if err != nil {
			t.Fatalf("init: %v %s", err, stderr)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatal(err)
		}
		members = append(members, m)
	}
	cons, _ := json.Marshal(map[string]any{"members": members}) // JSON is YAML
	for _, name := range []string{"north", "south"} {
		if err := os.WriteFile(filepath.Join(root, name, "consortium.yaml"), cons, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := filepath.Join(root, "north", "node.yaml")
	if _, stderr, err := run(t, bin, "keys", "generate", "--config", cfg); err == nil || !strings.Contains(stderr, "needs 3 or more") {
		t.Errorf("two members: %v %q", err, stderr)
	}
	if _, stderr, err := run(t, bin, "keys", "generate", "--config", cfg, "--bits", "1024"); err == nil || !strings.Contains(stderr, "2048, 3072 or 4096") {
		t.Errorf("--bits 1024: %v %q", err, stderr)
	}
	if _, stderr, err := run(t, bin, "keys", "generate", "--config", cfg, "--scheme", "rsa"); err == nil || !strings.Contains(stderr, "paillier or bgv") {
		t.Errorf("--scheme rsa: %v %q", err, stderr)
	}
}

// The keygen spec that `keys generate` submits is YAML that the node's own
// parser and the keygen kind accept, whatever the members are called.
func TestKeygenSpecParses(t *testing.T) {
	members := []string{"north", "south-2", "west_3"}
	for _, scheme := range []string{"paillier", "bgv"} {
		b, err := keygenSpec(members, 2048, scheme)
		if err != nil {
			t.Fatal(err)
		}
		spec, err := job.ParseSpec(b, "keygen")
		if err != nil {
			t.Fatalf("%s: %v\n%s", scheme, err, b)
		}
		if !slices.Equal(spec.PartyNames(), members) || spec.Kind != "keygen" {
			t.Fatalf("%s: parsed %v %v", scheme, spec.Kind, spec.PartyNames())
		}
		if err := (keygen.Kind{}).Validate(spec); err != nil {
			t.Fatalf("%s: %v", scheme, err)
		}
	}
}
