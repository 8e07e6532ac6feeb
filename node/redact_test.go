package node

import (
	"path/filepath"
	"testing"

	"github.com/cohortdm/cohort/table"
)

func TestRedactPaths(t *testing.T) {
	t.Parallel()
	c := &Config{
		DataDir:   "/srv/acme/data",
		TablesDir: "/srv/acme/tables",
		Tables: map[string]table.Source{
			"loans": {Path: "/mnt/finance/2026/loans.parquet"},
			"inner": {Path: "/srv/acme/tables/sub/inner.csv"},
			"lite":  {SQLite: "/var/db/acme.sqlite", Table: "t"},
		},
	}
	for _, tc := range []struct{ in, want string }{
		{`party north: table T: format: /srv/acme/tables/north.csv:3: column "v": not a finite number`,
			`party north: table T: format: tables_dir/north.csv:3: column "v": not a finite number`},
		{"open /mnt/finance/2026/loans.parquet: permission denied", "open table loans/loans.parquet: permission denied"},
		{"read /srv/acme/tables/sub/inner.csv:2", "read table inner/inner.csv:2"},
		{"sqlite /var/db/acme.sqlite table t: no such table", "sqlite table lite/acme.sqlite table t: no such table"},
		{"write /srv/acme/data/jobs/7/state: disk full", "write data_dir/jobs/7/state: disk full"},
		{"/srv/acme/tablesX/other.csv stays", "/srv/acme/tablesX/other.csv stays"},
		{"no path here", "no path here"},
		{"table x.csv: no such file in /srv/acme/tables", "table x.csv: no such file in tables_dir"},
		{"dirs /srv/acme/tables: and /srv/acme/tables.old/", "dirs tables_dir: and /srv/acme/tables.old/"},
	} {
		if got := c.redactPaths(tc.in); got != tc.want {
			t.Errorf("redactPaths(%q)\n got %q\nwant %q", tc.in, got, tc.want)
		}
	}
	// Relative or root directories are left alone rather than rewriting
	// every "/" in a message.
	rel := &Config{TablesDir: "tables", DataDir: string(filepath.Separator)}
	if got := rel.redactPaths("tables/x.csv and /etc/y"); got != "tables/x.csv and /etc/y" {
		t.Errorf("relative dirs: got %q", got)
	}
}
