package kinds

import (
	"os/exec"
	"strings"
	"testing"
)

// kindTrees are the packages whose trees hold one kind each: the
// registry's packages, and transform, which the CLI runs. anonymize,
// coherence, querylog and graphanon are libraries; their jobs are
// anonymize/onetable, coherence/publish, querylog/publish and
// graphanon/publish.
var kindTrees = []string{"sum", "quantile", "bicluster", "sjc", "integrate", "anonymize/onetable",
	"keygen", "pgen", "kde", "coherence/publish", "querylog/publish", "graphanon/publish", "probe", "transform", "hamming", "modelselect"}

// No kind imports another (its non-test code): what two kinds share lives
// in a package of its own (tree, secureagg, anonymize …), so a kind can be
// read, changed and removed alone.
func TestNoKindImportsAnother(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list over the module")
	}
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "../...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	const mod = "github.com/cohortdm/cohort/"
	treeOf := func(pkg string) string {
		for _, k := range kindTrees {
			if pkg == mod+k || strings.HasPrefix(pkg, mod+k+"/") {
				return k
			}
		}
		return ""
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		from := treeOf(fields[0])
		if from == "" {
			continue
		}
		for _, imp := range fields[1:] {
			if to := treeOf(imp); to != "" && to != from {
				t.Errorf("%s (kind %s) imports %s (kind %s)", fields[0], from, imp, to)
			}
		}
	}
}
