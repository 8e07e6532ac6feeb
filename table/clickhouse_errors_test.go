package table

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"testing"

	"github.com/ClickHouse/clickhouse-go/v2"
)

// Each way a ClickHouse source fails, read whole (Open) or aggregated on
// the server (Aggregator), names the source and the kind of failure,
// never the server's host, address or port, the user, the database, the
// password nor a cell value: the text reaches every member's log. A
// server's exception is still found by errors.As.
func TestClickHouseErrorsRedacted(t *testing.T) {
	srv := chShared.Start(t)
	ctx := context.Background()
	const secret = "s3cr3tvalue"
	// The bad value is in the fourth block the server sends (65,536 rows
	// each), so the read fails after rows have arrived.
	srv.Exec(t,
		"CREATE TABLE ledger (ward String, v Float64, word String) ENGINE = MergeTree ORDER BY tuple()",
		"INSERT INTO ledger SELECT 'a', number, if(number = 200000, '"+secret+"', toString(number)) FROM system.numbers LIMIT 200001")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close() // nothing listens there now
	port := strconv.Itoa(srv.Port)
	env := func(dsn string) string { return dsnEnv(t, dsn) }
	good := env(srv.ReadOnlyDSN())
	schema := map[string]Kind{"ward": Categorical, "v": Numeric}
	secrets := []string{secret, srv.Password, srv.AdminPassword, "wrongpassword", "127.0.0.1", "localhost", "[::1]",
		port, free, srv.Database, "user cohort", "ledgerreader", "nosuchledgerdb"}
	for _, c := range []struct {
		name      string
		src       Source
		exception bool
		want      string
	}{
		{"refused", Source{ClickHouseEnv: env("clickhouse://ledgerreader:wrongpassword@127.0.0.1:" + free + "/" + srv.Database), Table: "ledger"}, false,
			"dial tcp: connect: connection refused"},
		{"refused by name", Source{ClickHouseEnv: env("clickhouse://ledgerreader:wrongpassword@localhost:" + free + "/" + srv.Database), Table: "ledger"}, false,
			"connection refused"},
		{"wrong password", Source{ClickHouseEnv: env(srv.DSN("cohort", "wrongpassword")), Table: "ledger"}, true, "code: 193"},
		{"unknown user", Source{ClickHouseEnv: env(srv.DSN("ledgerreader", "wrongpassword")), Table: "ledger"}, true, "code: 192"},
		{"unknown database", Source{ClickHouseEnv: env("clickhouse://cohort:" + srv.Password + "@127.0.0.1:" + port + "/nosuchledgerdb"), Table: "ledger"}, true,
			"code: 81"},
		{"missing table", Source{ClickHouseEnv: good, Table: "missing"}, true, "code: 60"},
		{"missing column", Source{ClickHouseEnv: good, Query: "SELECT ward, nope AS v FROM ledger"}, true, "code: 47"},
		{"value mid-read", Source{ClickHouseEnv: good, Query: "SELECT ward, toFloat64(word) AS v FROM ledger"}, true,
			"code: 6, message: Cannot parse string '…' as Float64"},
	} {
		opts := ReadOptions{Label: Label(c.src)}
		_, err := Open(ctx, c.src, "t", schema, opts)
		chLeaks(t, c.name, err, secrets, Label(c.src), c.want)
		var ex *clickhouse.Exception
		if !errors.Is(err, ErrSource) || c.exception && !errors.As(err, &ex) {
			t.Errorf("%s: error lost its kind: %v", c.name, err)
		}
		agg, aerr := NewAggregator(c.src, schema, opts)
		if aerr == nil {
			_, _, aerr = agg.ColumnSum(ctx, "v", nil)
			agg.Close()
		}
		chLeaks(t, c.name+" (aggregate)", aerr, secrets, Label(c.src), c.want)
	}

	// An aggregate's result that is not a number names the result's
	// column and the value's type; database/sql's text quoted the value.
	src := Source{ClickHouseEnv: good, Table: "ledger"}
	conn, err := chDB{}.connect(ctx, src, Label(src))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.close(ctx)
	var x, y float64
	err = conn.row(ctx, "SELECT toFloat64(1), word FROM ledger WHERE word = '"+secret+"'", nil, []*float64{&x, &y})
	chLeaks(t, "text result", err, secrets, Label(src), "result column 2: a string value where a number was expected")
}

// chLeaks fails t when err's text carries one of secrets, or does not
// name the source (label) and the failure (want).
func chLeaks(t *testing.T, what string, err error, secrets []string, label, want string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error", what)
	}
	for _, s := range secrets {
		if strings.Contains(err.Error(), s) {
			t.Errorf("%s: error names %q: %v", what, s, err)
		}
	}
	for _, w := range []string{label, want} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: error does not say %q: %v", what, w, err)
		}
	}
}
