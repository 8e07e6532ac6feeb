package integrate

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/cohortdm/cohort/internal/atomicfile"
	"github.com/cohortdm/cohort/job"
)

// IntegratedFile is the name of the published table `cohort sim` writes.
const IntegratedFile = "integrated.csv"

// Assemble writes DIR/integrated.csv (DESIGN.md): a header row, then every
// record of the publication, generalised, with no id column, rows sorted by
// value. The committed result already holds the publication (distinct rows
// with counts), so nothing private is read; result.json gains the file's
// name.
func (Kind) Assemble(_ context.Context, _ *job.Spec, result []byte, _ map[string]job.Secrets, dir string) ([]byte, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("integrate: result: %w", err)
	}
	var pub Published
	if err := json.Unmarshal(res["published"], &pub); err != nil {
		return nil, fmt.Errorf("integrate: result field published: %w", err)
	}
	if err := WriteCSV(filepath.Join(dir, IntegratedFile), &pub); err != nil {
		return nil, err
	}
	res["integrated"], _ = json.Marshal(IntegratedFile)
	return json.MarshalIndent(res, "", "  ")
}

// WriteCSV writes a publication as a CSV file, one line per record.
func WriteCSV(path string, pub *Published) error {
	if err := pub.check(); err != nil {
		return err
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	err := w.Write(pub.Columns)
	for _, r := range pub.Rows {
		for i := 0; i < r.Count && err == nil; i++ {
			err = w.Write(r.Values)
		}
	}
	if w.Flush(); err == nil {
		err = w.Error()
	}
	if err == nil {
		err = atomicfile.Write(path, buf.Bytes(), 0o644)
	}
	if err != nil {
		return fmt.Errorf("integrate: write %s: %w", path, err)
	}
	return nil
}
