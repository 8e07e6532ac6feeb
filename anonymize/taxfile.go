package anonymize

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// LoadTaxonomy reads one column's taxonomy file as the jobs' specs name
// them: YAML when the name ends in .yaml or .yml (it says whether it is
// numeric), else an ARX hierarchy CSV, numeric when every leaf (first
// field) parses as a number. The column name is the caller's, whatever the
// file says.
func LoadTaxonomy(path, column string) (*Taxonomy, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("anonymize: taxonomy of column %q: %w", column, err)
	}
	ext := strings.ToLower(filepath.Ext(path))
	if ext == ".yaml" || ext == ".yml" {
		t, err := ReadYAML(bytes.NewReader(b))
		if err != nil {
			return nil, fmt.Errorf("anonymize: taxonomy of column %q (%s): %w", column, filepath.Base(path), err)
		}
		t.Column = column
		return t, nil
	}
	t, err := ReadARX(bytes.NewReader(b), column, numericLeaves(b))
	if err != nil {
		return nil, fmt.Errorf("anonymize: taxonomy of column %q (%s): %w", column, filepath.Base(path), err)
	}
	return t, nil
}

// numericLeaves reports whether every leaf (first field) of an ARX file is
// a finite number, and there is at least one.
func numericLeaves(b []byte) bool {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	leaves := 0
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		leaf, _, _ := strings.Cut(line, ";")
		x, err := strconv.ParseFloat(strings.TrimSpace(leaf), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
		leaves++
	}
	return leaves > 0
}
