package hamming

import (
	"os"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
)

// Specs the kind cannot run are refused before anything runs, naming the
// field and no value.
func TestValidate(t *testing.T) {
	t.Parallel()
	base, err := os.ReadFile(numericSpec)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ from, to, field string }{
		{"threshold: 5", "threshold: 500", "params.threshold"},
		{"threshold: 5", "threshold: -1", "params.threshold"},
		{"keyholder: north", "keyholder: east", "params.keyholder"},
		{"bp_south: {patient: id, systolic: numeric}", "bp_south: {patient: id, systolic: categorical}", "schema.bp_south"},
		{"bp_south: {patient: id, systolic: numeric}", "bp_south: {patient: numeric, systolic: numeric}", "schema.bp_south"},
		{"bp_north: {patient: id, systolic: numeric}", "bp_north: {patient: id, systolic: numeric, diagnosis: categorical}", "schema.bp_north"},
		{"threshold: 5}", "threshold: 5, align: rows}", "params.align"},
		{"threshold: 5}", "threshold: 5, min_ids: 0}", "params.min_ids"},
	} {
		text := strings.Replace(string(base), c.from, c.to, 1)
		spec, err := job.ParseSpec([]byte(text), numericSpec)
		if err == nil {
			err = Kind{}.Validate(spec)
		}
		if err == nil || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%q: %v, want an error naming %s", c.to, err, c.field)
		}
	}
	threshold := strings.Replace(string(base), "numeric}", "categorical}", 2)
	spec, err := job.ParseSpec([]byte(threshold), numericSpec)
	if err == nil {
		err = Kind{}.Validate(spec)
	}
	if err == nil || !strings.Contains(err.Error(), "params.threshold") {
		t.Errorf("a threshold over text columns: %v", err)
	}
}
