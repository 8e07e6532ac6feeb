// Package configs_test checks the deployment files in configs/ against each
// other and against the node dirs compose-init.sh writes.
package configs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/cohortdm/cohort/node"
)

type compose struct {
	Services map[string]service `yaml:"services"`
	Networks map[string]any     `yaml:"networks"`
}

type service struct {
	Image       string         `yaml:"image"`
	Build       map[string]any `yaml:"build"`
	Command     []string       `yaml:"command"`
	Networks    []string       `yaml:"networks"`
	Volumes     []string       `yaml:"volumes"`
	Ports       []string       `yaml:"ports"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
}

// The compose file, the two Dockerfiles and compose-init.sh agree: every
// node service runs the binary where the images put it, mounts its own node
// dir at /data and the examples where its node.yaml's tables_dir says; the
// node.yaml and consortium.yaml compose-init.sh writes load with the node's
// strict loaders; every member is reached by a service name on the shared
// network at the port it listens on; north's HTTP port is the one
// published; every table the node dirs map exists among the examples.
func TestComposeAgreesWithConfigs(t *testing.T) {
	b, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c compose
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	names := []string{"north", "south", "west"}
	if got := slices.Sorted(func(yield func(string) bool) {
		for k := range c.Services {
			if !yield(k) {
				return
			}
		}
	}); !slices.Equal(got, names) {
		t.Fatalf("services %v, want %v", got, names)
	}
	checkDockerfiles(t)
	nodes := composeInit(t)
	for _, name := range names {
		checkService(t, &c, names, nodes, name)
	}
}

// checkDockerfiles: both images put the binary at /usr/local/bin/cohort
// (the scratch one as its entrypoint, FROM scratch) and expose the node's
// ports.
func checkDockerfiles(t *testing.T) {
	t.Helper()
	scratch := read(t, "Dockerfile.scratch")
	multi := read(t, "Dockerfile")
	if !strings.Contains(scratch, "COPY cohort /usr/local/bin/cohort") || !strings.Contains(scratch, `ENTRYPOINT ["/usr/local/bin/cohort"]`) ||
		!strings.Contains(scratch, "FROM scratch") {
		t.Error("Dockerfile.scratch does not put the binary at /usr/local/bin/cohort FROM scratch")
	}
	if !strings.Contains(multi, "/usr/local/bin/cohort") {
		t.Error("Dockerfile does not put the binary at /usr/local/bin/cohort")
	}
	for _, df := range []string{scratch, multi} {
		if !strings.Contains(df, "EXPOSE 7400/tcp 7400/udp 7480/tcp") {
			t.Error("a Dockerfile does not expose 7400/tcp, 7400/udp and 7480/tcp")
		}
	}
}

// composeInit writes the node dirs as compose-init.sh does (without dealing
// a key) and returns their parent. The binary it uses is linked without the
// symbol table and DWARF, which only a debugger reads: a quarter less
// linking.
func composeInit(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "cohort")
	if out, err := exec.Command("go", "build", "-ldflags", "-s -w", "-o", bin, "../cmd/cohort").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	nodes := filepath.Join(t.TempDir(), "nodes")
	cmd := exec.Command("sh", "compose-init.sh", nodes)
	cmd.Env = append(os.Environ(), "COHORT="+bin, "DEAL=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("compose-init.sh: %v\n%s", err, out)
	}
	return nodes
}

// checkService checks one node service against the compose file, the
// images and the node dir compose-init.sh wrote for it under nodes.
func checkService(t *testing.T, c *compose, names []string, nodes, name string) {
	t.Helper()
	s := c.Services[name]
	if dockerfile, _ := s.Build["dockerfile"].(string); dockerfile != "configs/Dockerfile" || s.Build["context"] != ".." {
		t.Errorf("%s: build %v, want context .. and configs/Dockerfile", name, s.Build)
	}
	if _, err := os.Stat(filepath.Join("..", "configs", "Dockerfile")); err != nil {
		t.Error(err)
	}
	if !strings.Contains(s.Image, "cohort:scratch") {
		t.Errorf("%s: image %q, want cohort:scratch by default", name, s.Image)
	}
	if len(s.Healthcheck.Test) < 2 || s.Healthcheck.Test[1] != "/usr/local/bin/cohort" {
		t.Errorf("%s: healthcheck %v does not run the image's binary (the scratch image has no shell)", name, s.Healthcheck.Test)
	}
	i := slices.Index(s.Command, "--config")
	if i < 0 || i+1 == len(s.Command) {
		t.Fatalf("%s: command %v has no --config", name, s.Command)
	}
	cfgPath := s.Command[i+1] // /data/node.yaml
	mounts := serviceMounts(t, s, nodes, name)
	dataDir, ok := mounts[filepath.Dir(cfgPath)]
	if !ok {
		t.Fatalf("%s: %s is not in a mounted volume (%v)", name, cfgPath, mounts)
	}
	cfg, err := node.LoadConfig(filepath.Join(dataDir, filepath.Base(cfgPath)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if cfg.Name != name || cfg.DataDir != dataDir {
		t.Errorf("%s: node.yaml names %q with data dir %s, want the mounted dir %s", name, cfg.Name, cfg.DataDir, dataDir)
	}
	checkMembers(t, c, s, names, cfg, name)
	checkTablesAndPorts(t, s, cfg, mounts, name)
	if st, err := os.Stat(filepath.Join(dataDir, node.TokenFile)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("%s: API token: %v", name, err)
	}
}

var dataMount = regexp.MustCompile(`^\$\{COHORT_NODES:-\./nodes\}/([a-z]+):(/[a-z]+)$`)

// serviceMounts maps each container path service name mounts to its host
// path; the node-dir mount must be name's own dir under nodes, and any
// other mount's source must exist.
func serviceMounts(t *testing.T, s service, nodes, name string) map[string]string {
	t.Helper()
	mounts := map[string]string{} // container path -> host path
	for _, v := range s.Volumes {
		if m := dataMount.FindStringSubmatch(v); m != nil {
			if m[1] != name {
				t.Errorf("%s mounts %s's node dir", name, m[1])
			}
			mounts[m[2]] = filepath.Join(nodes, m[1])
			continue
		}
		parts := strings.Split(v, ":")
		if len(parts) < 2 {
			t.Fatalf("%s: volume %q", name, v)
		}
		if _, err := os.Stat(parts[0]); err != nil {
			t.Errorf("%s: volume %q: %v", name, v, err)
		}
		mounts[parts[1]] = parts[0]
	}
	return mounts
}

// checkMembers: name's consortium.yaml loads and lists every service, each
// member reached by its service name on a network both declare, and name
// listens on the consortium's port.
func checkMembers(t *testing.T, c *compose, s service, names []string, cfg *node.Config, name string) {
	t.Helper()
	cons, err := node.LoadConsortium(cfg.Consortium)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(cons.Names(), names) {
		t.Errorf("%s: consortium %v", name, cons.Names())
	}
	for _, m := range cons.Members {
		peer, ok := c.Services[m.Name]
		if !ok {
			t.Errorf("member %s is not a compose service", m.Name)
			continue
		}
		if !slices.ContainsFunc(peer.Networks, func(n string) bool { return slices.Contains(s.Networks, n) && c.Networks[n] != nil }) {
			t.Errorf("%s and %s share no declared network", name, m.Name)
		}
		for _, a := range m.Addrs {
			if !strings.HasPrefix(a, "/dns4/"+m.Name+"/") {
				t.Errorf("member %s at %s, not by its service name", m.Name, a)
			}
		}
	}
	for _, l := range cfg.Listen {
		if !strings.Contains(l, "/7400") {
			t.Errorf("%s listens on %s; the consortium and the images use port 7400", name, l)
		}
	}
}

// checkTablesAndPorts: tables_dir is a mount and every mapped table exists
// in it; north's API is the one published port, on loopback only.
func checkTablesAndPorts(t *testing.T, s service, cfg *node.Config, mounts map[string]string, name string) {
	t.Helper()
	tablesHost, ok := mounts[cfg.TablesDir]
	if !ok {
		t.Fatalf("%s: tables_dir %s is not mounted", name, cfg.TablesDir)
	}
	if len(cfg.Tables) == 0 {
		t.Errorf("%s maps no tables", name)
	}
	for tname, src := range cfg.Tables {
		if _, err := os.Stat(filepath.Join(tablesHost, src.Path)); err != nil {
			t.Errorf("%s: table %s: %v", name, tname, err)
		}
	}
	// North's API is the published port; the others publish none.
	if name == "north" {
		if len(s.Ports) != 1 || !strings.HasSuffix(s.Ports[0], ":"+strings.Split(cfg.HTTP, ":")[1]) || !strings.HasPrefix(s.Ports[0], "127.0.0.1:") {
			t.Errorf("north publishes %v, its API listens on %q; want it on loopback only", s.Ports, cfg.HTTP)
		}
	} else if len(s.Ports) != 0 || cfg.HTTP != "" {
		t.Errorf("%s publishes %v (http %q)", name, s.Ports, cfg.HTTP)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The commented examples load with the node's strict loaders.
func TestExampleConfigsLoad(t *testing.T) {
	if _, err := node.LoadConfig("node.yaml"); err != nil {
		t.Error(err)
	}
	if _, err := node.LoadConsortium("consortium.yaml"); err != nil {
		t.Error(err)
	}
}
