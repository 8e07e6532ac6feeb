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
// (threshold.pub, threshold.share and threshold.info; lattice.* for
// scheme bgv), the files `cohort keys deal` writes for a member. The result is returned unchanged.
func (Kind) Assemble(ctx context.Context, spec *job.Spec, result []byte, parties map[string]job.Secrets, dir string) ([]byte, error) {
	prm, err := parseParams(spec)
	if err != nil {
		return nil, err
	}
	files := []string{keyring.PaillierPublicFile, keyring.PaillierShareFile, keyring.PaillierInfoFile}
	if prm.Scheme == SchemeBGV {
		files = []string{keyring.LatticePublicFile, keyring.LatticeShareFile, keyring.LatticeInfoFile}
	}
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
		for i, f := range files {
			b, err := sec.ReadSecret(f)
			if err != nil {
				return nil, fmt.Errorf("keygen: party %s: %w", name, err)
			}
			mode := os.FileMode(0o644)
			if i == 1 {
				mode = 0o600 // the share
			}
			if err := atomicfile.Write(filepath.Join(out, filepath.Base(f)), b, mode); err != nil {
				return nil, fmt.Errorf("keygen: party %s: %w", name, err)
			}
		}
	}
	return result, nil
}

var _ job.Assembler = Kind{}
