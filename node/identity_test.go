package node_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/node"
)

// Init refuses a name or listen address that would only fail once the node
// runs (a name with spaces, host:port instead of a multiaddr), and writes
// nothing when it does.
func TestInitValidatesNameAndListen(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		listen []string
		want   string
	}{
		{"my org", nil, "letters, digits"},
		{"a/b", nil, "letters, digits"},
		{"-north", nil, "starting with a letter or digit"},
		{strings.Repeat("n", 65), nil, "longer than 64"},
		{"north", []string{"127.0.0.1:7404"}, "/ip4/127.0.0.1/tcp/7404"},
		{"north", []string{"[::1]:7404"}, "/ip6/::1/tcp/7404"},
		{"north", []string{"tcp 7400"}, "not a multiaddr"},
	} {
		dir := filepath.Join(t.TempDir(), "n")
		_, _, err := node.Init(tc.name, dir, tc.listen)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Init(%q, %v): %v, want it to mention %q", tc.name, tc.listen, err, tc.want)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("Init(%q, %v) created %s", tc.name, tc.listen, dir)
		}
	}
	cfgPath := filepath.Join(t.TempDir(), "node.yaml")
	os.WriteFile(cfgPath, []byte("name: my org\ndata_dir: .\nconsortium: c.yaml\n"), 0o644)
	if _, err := node.LoadConfig(cfgPath); err == nil || !strings.Contains(err.Error(), "letters, digits") {
		t.Errorf("LoadConfig with name \"my org\": %v", err)
	}
	for _, name := range []string{"north", "org01", "St.Mary_s-2"} {
		if _, _, err := node.Init(name, filepath.Join(t.TempDir(), "n"), []string{"/ip4/127.0.0.1/tcp/7400"}); err != nil {
			t.Errorf("Init(%q): %v", name, err)
		}
	}
}

// TestInitBuildsTablesEagerly: the node.yaml of node init asks for the
// key's tables at start (a long-running node's memory is flat from its
// start), while a config that leaves it out stays lazy.
func TestInitBuildsTablesEagerly(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "n")
	if _, _, err := node.Init("north", dir, nil); err != nil {
		t.Fatal(err)
	}
	cfg, err := node.LoadConfig(filepath.Join(dir, "node.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.PaillierTables != "eager" {
		t.Fatalf("node init wrote paillier_tables %q, want eager", cfg.PaillierTables)
	}
}
