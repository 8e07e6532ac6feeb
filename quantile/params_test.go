package quantile

import (
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

func specWith(t *testing.T, params string) *job.Spec {
	t.Helper()
	return specOver(t, "[{name: a}]", params)
}

// refusedNaming checks that the params of each case (over spec's parties)
// are refused with an error naming the case's field.
func refusedNaming(t *testing.T, spec func(*testing.T, string) *job.Spec, cases map[string]string) {
	t.Helper()
	for params, field := range cases {
		err := (Kind{}).Validate(spec(t, "{"+params+"}"))
		if err == nil || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v, want an error naming %s", params, err, field)
		}
	}
}

// specOver is a quantile spec over parties (YAML) with params.
func specOver(t *testing.T, parties, params string) *job.Spec {
	t.Helper()
	s, err := job.ParseSpec([]byte("kind: quantile\nparties: "+parties+"\nparams: "+params+"\n"), "spec.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Every bad param is refused with an error naming its field.
func TestValidate(t *testing.T) {
	t.Parallel()
	bad := map[string]string{
		"{}":                                                                "params.column",
		"{column: v, quantiles: []}":                                        "params.quantiles",
		"{column: v, quantiles: [0.5, 1.5]}":                                "params.quantiles[1]",
		"{column: v, quantiles: [-0.1]}":                                    "params.quantiles[0]",
		"{column: v, quantiles: [.nan]}":                                    "params.quantiles[0]",
		"{column: v, quantiles: [0.5, 0.5]}":                                "params.quantiles[1]",
		"{column: v, quantiles: 0.5}":                                       "params.quantiles",
		"{column: v, quantiles: [x]}":                                       "params.quantiles",
		"{column: v, precision: -1}":                                        "params.precision",
		"{column: v, precision: .inf}":                                      "params.precision",
		"{column: v, precision: .nan}":                                      "params.precision",
		"{column: v, precision: fine}":                                      "params.precision",
		"{column: v, retries: -1}":                                          "params.retries",
		"{column: v, retries: 21}":                                          "params.retries",
		"{column: v, timeout_ms: -5}":                                       "params.timeout_ms",
		"{column: v, timeout_ms: 86400001}":                                 "params.timeout_ms",
		"{column: v, range: [1]}":                                           "params.range",
		"{column: v, range: [2, 1]}":                                        "params.range",
		"{column: v, range: [1, 1]}":                                        "params.range",
		"{column: v, range: [0, .inf]}":                                     "params.range",
		"{column: v, range: [.nan, 1]}":                                     "params.range",
		"{column: v, range: 5}":                                             "params.range",
		"{column: v, range: [1, 1.005]}":                                    "params.range",
		"{column: v, rang: [0, 1]}":                                         "params.rang",
		"{column: v, backend: rlwe}":                                        "params.backend",
		"{column: v, quantiles: [0, 1], precision: 0}":                      "params.quantiles[0]",
		"{column: v, quantiles: [0.5, 1]}":                                  "params.quantiles[1]",
		"{column: v, quantiles: [" + strings.Repeat("0.5, ", 100) + "0.5]}": "params.quantiles",
	}
	for params, field := range bad {
		err := Kind{}.Validate(specWith(t, params))
		if err == nil || !strings.Contains(err.Error(), "field "+field+":") {
			t.Errorf("params %s: error %v, want one naming %s", params, err, field)
		}
	}
	p, err := parseParams(specWith(t, "{column: v}"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Quantiles) != 1 || p.Quantiles[0] != 0.5 || p.Precision != 0.01 || p.Retries != 5 {
		t.Errorf("defaults %+v: want the median at precision 0.01 with 5 retries", p)
	}
	if _, err := parseParams(specWith(t, "{column: v, quantiles: [1e-9, 0.999999999], precision: 0, retries: 0, range: [-0.0, 1e300]}")); err != nil {
		t.Errorf("edge values refused: %v", err)
	}
}

// The round args, the decision and the step output survive encoding as the
// round decodes them (job.Round: strictly). Args a coordinator was not
// determined to send are refused by the parties (TestCoordinatorCannotChooseThresholds).
func TestEncodings(t *testing.T) {
	t.Parallel()
	a := args{Total: true, Thresholds: []float64{-1.5, 0, 2e300}}
	b, err := wire.Marshal(&a)
	if err != nil {
		t.Fatal(err)
	}
	back, err := count.Args(job.Step{Phase: count.Phase, Args: b})
	if err != nil || back.Total != a.Total || len(back.Thresholds) != 3 || back.Thresholds[2] != 2e300 || back.slots() != 4 {
		t.Fatalf("args round trip: %+v, %v", back, err)
	}
	d := decision{Counts: []int64{0, 7, 1 << 40}, Retry: map[string]string{"x": "y"}}
	b, err = wire.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	dback, err := count.Decision(&job.Record{Step: job.Step{Phase: count.Phase}, Decision: b})
	if err != nil || len(dback.Counts) != 3 || dback.Counts[2] != 1<<40 || dback.Retry["x"] != "y" {
		t.Fatalf("decision round trip: %+v, %v", dback, err)
	}
	if _, err := count.Args(job.Step{Phase: count.Phase, Args: append(b, 1)}); err == nil {
		t.Error("args with trailing bytes accepted")
	}
}

// FuzzDecode feeds arbitrary bytes to the round's decoders and the fold:
// an error, never a panic.
func FuzzDecode(f *testing.F) {
	for _, v := range []any{&args{Total: true, Thresholds: []float64{1}}, &output{Outcome: &secureagg.Outcome{Sum: []float64{1}}}, &decision{Counts: []int64{3}}} {
		b, _ := wire.Marshal(v)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = count.Args(job.Step{Phase: count.Phase, Args: b})
		_, _ = count.Decision(&job.Record{Step: job.Step{Phase: count.Phase}, Decision: b})
		var o output
		if wire.Unmarshal(b, &o) == nil {
			step := job.Step{Phase: count.Phase, Parties: []string{"a", "b"}, Coordinator: "b"}
			_, _ = decide(&job.Outcome[output]{Step: step, Results: map[string]output{"a": o, "b": o}}, 1, &Params{})
		}
	})
}
