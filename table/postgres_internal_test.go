package table

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A connection that fails names neither the database's host or socket
// directory, nor its user, database name or password: the text reaches
// every member's log.
func TestPostgresConnectErrorRedacted(t *testing.T) {
	dir := t.TempDir() // no server listens here
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cs := "host=" + dir + " user=clinicadmin dbname=patients_2026 password=hunter22 connect_timeout=2"
	t.Setenv("COHORT_TEST_PG_REDACT", cs)
	_, err := pgConnect(ctx, Source{PostgresEnv: "COHORT_TEST_PG_REDACT", Table: "visits"}, "table visits")
	if err == nil {
		t.Fatal("connected to nothing")
	}
	for _, secret := range []string{dir, "clinicadmin", "patients_2026", "hunter22"} {
		if strings.Contains(err.Error(), secret) {
			t.Errorf("connect error names %q: %v", secret, err)
		}
	}
	if !strings.Contains(err.Error(), "table visits") {
		t.Errorf("connect error does not name the source: %v", err)
	}
}
