package keygen_test

import (
	"context"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keygen"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/sim"
)

// TestSim runs keygen on three real nodes over libp2p on loopback with
// `cohort sim`'s Run and checks the assembled key files.
func TestSim(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "keygen.yaml")
	if err := os.WriteFile(spec, []byte("kind: keygen\nparties: [{name: ann}, {name: bob}, {name: cat}]\nparams: {bits: 512, batch: 512, chunk: 1024}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	out := filepath.Join(dir, "out")
	res, err := sim.Run(ctx, spec, sim.RunOptions{Kinds: job.Registry{"keygen": keygen.Kind{}}, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("result: %v", res)
	var id string
	for i, name := range []string{"ann", "bob", "cat"} {
		pub, err := os.ReadFile(filepath.Join(out, "keys", name, "threshold.pub"))
		if err != nil {
			t.Fatal(err)
		}
		share, err := os.ReadFile(filepath.Join(out, "keys", name, "threshold.share"))
		if err != nil {
			t.Fatal(err)
		}
		k, err := secureagg.ParseKeys(pub, share)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if st, err := os.Stat(filepath.Join(out, "keys", name, "threshold.share")); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s's share file: %v %v", name, st, err)
		}
		if k.Share.Index != i+1 {
			t.Fatalf("%s holds share %d", name, k.Share.Index)
		}
		kid := hex.EncodeToString(k.Public().KeyID[:])
		if id == "" {
			id = kid
		} else if kid != id {
			t.Fatalf("%s holds key %s, ann %s", name, kid, id)
		}
	}
	if res["key_id"] != id || res["candidates"] == nil || res["threshold"] != float64(2) || res["bits"] != float64(512) {
		t.Fatalf("result %v", res)
	}
}
