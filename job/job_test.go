package job

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSubChannelsDoNotCollide(t *testing.T) {
	s := Step{Job: "j", Phase: "p", Round: 1, Attempt: 1}
	a, b := s.Sub("count"), s.Sub("sum")
	if a.Key("t") == b.Key("t") || a.Key("t") == s.Key("t") {
		t.Fatal("sub-channel keys collide")
	}
	m := a.Message("x", "t", nil)
	if m.Key() != a.Key("t") {
		t.Fatalf("message key %+v, want %+v", m.Key(), a.Key("t"))
	}
	if got := a.Sub("inner").Channel; got != "count/inner" {
		t.Fatalf("nested channel %q", got)
	}
}

func TestRandIsDeterministicPerLabel(t *testing.T) {
	seed := []byte("0123456789abcdef0123456789abcdef")
	if Rand(seed, "a").Uint64() != Rand(seed, "a").Uint64() {
		t.Fatal("same seed and label, different streams")
	}
	if Rand(seed, "a").Uint64() == Rand(seed, "b").Uint64() {
		t.Fatal("labels share a stream")
	}
	other := append([]byte(nil), seed...)
	other[0] ^= 1
	if Rand(seed, "a").Uint64() == Rand(other, "a").Uint64() {
		t.Fatal("seeds share a stream")
	}
}

type testNoise struct {
	Mechanism string  `yaml:"mechanism"`
	Epsilon   float64 `yaml:"epsilon"`
}

type testParams struct {
	Column    string     `yaml:"column"`
	Quantiles []float64  `yaml:"quantiles"`
	TimeoutMS int64      `yaml:"timeout_ms"`
	Noise     *testNoise `yaml:"noise"`
	Enabled   bool       `yaml:"enabled"`
}

func specWith(t *testing.T, params string) *Spec {
	t.Helper()
	s, err := ParseSpec([]byte("kind: x\nparties: [{name: a}]\nparams: "+params+"\n"), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDecodeParams(t *testing.T) {
	p := testParams{Column: "default", TimeoutMS: 7}
	if err := specWith(t, "{quantiles: [0.5, 0.9], noise: {mechanism: laplace, epsilon: 1}, enabled: true}").DecodeParams(&p); err != nil {
		t.Fatal(err)
	}
	if p.Column != "default" || p.TimeoutMS != 7 || len(p.Quantiles) != 2 || p.Noise == nil || p.Noise.Epsilon != 1 || !p.Enabled {
		t.Fatalf("decoded %+v", p)
	}
	for params, want := range map[string]string{
		"{colum: v}":                         "field params.colum: unknown field (known: column, enabled, noise, quantiles, timeout_ms)",
		"{timeout_ms: soon}":                 `field params.timeout_ms: must be an integer, not "soon"`,
		"{timeout_ms: 99999999999999999999}": "field params.timeout_ms: must be an integer",
		"{quantiles: 0.5}":                   "field params.quantiles: must be a list of numbers",
		"{noise: {epsilon: one}}":            `field params.noise.epsilon: must be a number, not "one"`,
		"{noise: {sigma: 1}}":                "field params.noise.sigma: unknown field",
		"{noise: laplace}":                   "field params.noise: must be a mapping",
		"{enabled: maybe}":                   "field params.enabled: must be true or false",
	} {
		var p testParams
		err := specWith(t, params).DecodeParams(&p)
		if err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), want) {
			t.Errorf("params %s: %v, want %q", params, err, want)
		}
	}
	var none testParams
	s, err := ParseSpec([]byte("kind: x\nparties: [{name: a}]\n"), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.DecodeParams(&none); err != nil {
		t.Fatalf("no params: %v", err)
	}
}

func TestResolveTablePathStaysInside(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(root, "data"), 0o755))
	must(os.WriteFile(filepath.Join(root, "data", "a.csv"), []byte("v\n1\n"), 0o644))
	must(os.WriteFile(filepath.Join(outside, "secret.csv"), []byte("v\n1\n"), 0o644))
	must(os.Symlink(filepath.Join(outside, "secret.csv"), filepath.Join(root, "link.csv")))
	must(os.Symlink(outside, filepath.Join(root, "dirlink")))

	got, err := ResolveTablePath(root, "data/a.csv")
	if err != nil || filepath.Base(got) != "a.csv" {
		t.Fatalf("inside path: %q, %v", got, err)
	}
	for _, p := range []string{"../outside.csv", filepath.Join(outside, "secret.csv"), "data/../../x.csv", "link.csv", "dirlink/secret.csv"} {
		if _, err := ResolveTablePath(root, p); err == nil || !strings.Contains(err.Error(), "outside the tables directory") {
			t.Errorf("%s: %v, want a refusal", p, err)
		}
	}
	if _, err := ResolveTablePath(root, "missing.csv"); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing file: %v", err)
	}
	// The spec itself refuses paths that leave the directory.
	if _, err := ParseSpec([]byte("kind: x\nparties: [{name: a, tables: [{name: t, path: ../x.csv}]}]\n"), "s.yaml"); err == nil || !strings.Contains(err.Error(), "parties[0].tables[0].path") {
		t.Errorf("spec with ../x.csv: %v", err)
	}
}

// A kind's params.timeout_ms is 0 (the node's default) up to a day; the
// error names the field and is ErrSpec.
func TestCheckTimeoutMS(t *testing.T) {
	s := specWith(t, "{}")
	for _, ms := range []int64{0, 1, MaxStepTimeout.Milliseconds()} {
		if err := s.CheckTimeoutMS(ms); err != nil {
			t.Errorf("%d: %v", ms, err)
		}
	}
	for _, ms := range []int64{-1, MaxStepTimeout.Milliseconds() + 1} {
		if err := s.CheckTimeoutMS(ms); err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "params.timeout_ms") {
			t.Errorf("%d: %v, want an ErrSpec naming params.timeout_ms", ms, err)
		}
	}
}

// TestOutcomeCurable: a step may run again when every failure is a silent
// party or a transient error's text, and not when any party failed with
// an error of its own.
func TestOutcomeCurable(t *testing.T) {
	lost := errors.New("kind: no message in time")
	for _, c := range []struct {
		failed map[string]string
		silent []string
		want   bool
	}{
		{nil, nil, true},
		{map[string]string{"a": "unreachable"}, []string{"a"}, true},
		{map[string]string{"a": "party a: " + lost.Error() + " from b"}, nil, true},
		{map[string]string{"a": "unreachable", "b": "party b: its table has no column v"}, []string{"a"}, false},
	} {
		o := &Outcome[int]{Failed: c.failed, Silent: c.silent}
		if got := o.Curable(lost); got != c.want {
			t.Errorf("%v, silent %v: curable %v, want %v", c.failed, c.silent, got, c.want)
		}
	}
}
