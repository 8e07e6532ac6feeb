package integrate

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
)

// IntegratedFile is the name of the published table `cohort sim` writes.
const IntegratedFile = "integrated.csv"

// Assemble writes DIR/integrated.csv: a header row, then every record of
// the publication, generalised, with no id column, rows sorted by value.
// The committed result already holds the publication (distinct rows with
// counts), so nothing private is read. It returns result.json with the
// file's name under "integrated" and the publication summarised under
// "published" (its columns and distinct rows): the table itself is in the
// file, so `cohort sim` need not know its layout. Over running nodes the
// committed result (`cohort job result`) holds the whole publication.
func (Kind) Assemble(_ context.Context, _ *job.Spec, result []byte, _ map[string]job.Secrets, dir string) ([]byte, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("integrate: result: %w", err)
	}
	var pub anonymize.Published
	if err := json.Unmarshal(res["published"], &pub); err != nil {
		return nil, fmt.Errorf("integrate: result field published: %w", err)
	}
	if err := pub.WriteCSV(filepath.Join(dir, IntegratedFile)); err != nil {
		return nil, err
	}
	res["integrated"], _ = json.Marshal(IntegratedFile)
	res["published"], _ = json.Marshal(map[string]any{"columns": pub.Columns, "distinct_rows": len(pub.Rows)})
	return json.MarshalIndent(res, "", "  ")
}

var _ job.Assembler = Kind{}
