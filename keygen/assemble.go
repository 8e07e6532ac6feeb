package keygen

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cohortdm/cohort/internal/atomicfile"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
)

// Assemble copies each party's installed key files to DIR/keys/PARTY/
// (threshold.pub, threshold.share and threshold.info), the files `cohort
// keys deal` writes for a member. The result is returned unchanged.
func (Kind) Assemble(ctx context.Context, spec *job.Spec, result []byte, parties map[string]job.Secrets, dir string) ([]byte, error) {
	for _, name := range spec.PartyNames() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		sec, ok := parties[name]
		if !ok {
			return nil, fmt.Errorf("keygen: no data dir for party %s", name)
		}
		out := filepath.Join(dir, "keys", name)
		if err := os.MkdirAll(out, 0o700); err != nil {
			return nil, fmt.Errorf("keygen: party %s: %w", name, err)
		}
		for _, f := range []struct {
			name string
			mode os.FileMode
		}{{keyring.PaillierPublicFile, 0o644}, {keyring.PaillierShareFile, 0o600}, {keyring.PaillierInfoFile, 0o644}} {
			b, err := sec.ReadSecret(f.name)
			if err != nil {
				return nil, fmt.Errorf("keygen: party %s: %w", name, err)
			}
			if err := atomicfile.Write(filepath.Join(out, filepath.Base(f.name)), b, f.mode); err != nil {
				return nil, fmt.Errorf("keygen: party %s: %w", name, err)
			}
		}
	}
	return result, nil
}

var _ job.Assembler = Kind{}
