package keyring

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cohortdm/cohort/internal/atomicfile"
	"github.com/cohortdm/cohort/job"
)

// Files under a node's data dir (slash-separated, as job.Secrets names
// them).
const (
	PaillierPublicFile = "keys/threshold.pub"
	PaillierShareFile  = "keys/threshold.share"
	PaillierInfoFile   = "keys/threshold.info"
	LatticePublicFile  = "keys/lattice.pub"
	LatticeShareFile   = "keys/lattice.share"
	LatticeInfoFile    = "keys/lattice.info"
)

// ErrKeys wraps every problem with stored, dealt or generated key material.
var ErrKeys = errors.New("keyring: bad key material")

// file is one file to write: its name under the data dir, its content and
// the mode it gets where modes apply (a data dir; job.Secrets writes 0600).
type file struct {
	name string
	data []byte
	mode os.FileMode
}

// store is where key files are read and written: a data dir, or a job's
// Secrets (which is a data dir seen through the runtime).
type store interface {
	read(name string) ([]byte, error)
	write(f file) error
}

type dirStore string

func (d dirStore) path(name string) string { return filepath.Join(string(d), filepath.FromSlash(name)) }

func (d dirStore) read(name string) ([]byte, error) {
	b, err := os.ReadFile(d.path(name))
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrKeys, name, unwrapPath(err))
	}
	return b, nil
}

func (d dirStore) write(f file) error {
	p := d.path(f.name)
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return fmt.Errorf("%w: write %s: %w", ErrKeys, f.name, unwrapPath(err))
	}
	if err := atomicfile.Write(p, f.data, f.mode); err != nil {
		return fmt.Errorf("%w: write %s: %w", ErrKeys, f.name, unwrapPath(err))
	}
	return nil
}

// unwrapPath drops the path of an *os.PathError (the file is named by its
// name under the data dir instead) and keeps the cause, so errors.Is
// still finds os.ErrNotExist.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

type secretsStore struct{ s job.Secrets }

func (s secretsStore) read(name string) ([]byte, error) {
	b, err := s.s.ReadSecret(name)
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrKeys, name, err)
	}
	return b, nil
}

func (s secretsStore) write(f file) error {
	if err := s.s.WriteSecret(f.name, f.data); err != nil {
		return fmt.Errorf("%w: write %s: %w", ErrKeys, f.name, err)
	}
	return nil
}

// writeAll writes files in order (the share first: see the package doc).
func writeAll(st store, files ...file) error {
	for _, f := range files {
		if err := st.write(f); err != nil {
			return err
		}
	}
	return nil
}

// stage writes files under dir (slash-separated, inside the data dir)
// through Secrets, each under its base name and in the order given (the
// share first), for a key that is not installed yet.
func stage(s job.Secrets, dir string, files []file) error {
	for i := range files {
		files[i].name = dir + "/" + baseName(files[i].name)
	}
	return writeAll(secretsStore{s}, files...)
}

// readStaged reads the public and share file that stage wrote under dir.
func readStaged(s job.Secrets, dir, publicFile, shareFile string) (public, share []byte, err error) {
	st := secretsStore{s}
	if public, err = st.read(dir + "/" + baseName(publicFile)); err != nil {
		return nil, nil, err
	}
	if share, err = st.read(dir + "/" + baseName(shareFile)); err != nil {
		return nil, nil, err
	}
	return public, share, nil
}

func baseName(name string) string { return name[len("keys/"):] }

// Held reports whether a node's data dir holds a share of either key: a
// consortium whose nodes already hold keys is not dealt new ones.
func Held(dataDir string) bool {
	for _, name := range []string{PaillierShareFile, LatticeShareFile} {
		if _, err := os.Stat(dirStore(dataDir).path(name)); err == nil {
			return true
		}
	}
	return false
}

// ExistingPaillier and ExistingLattice list the files under dataDir (as
// paths) that saving that key would replace, for a command that refuses to
// overwrite keys.
func ExistingPaillier(dataDir string) []string {
	return existing(dataDir, PaillierShareFile, PaillierPublicFile)
}

// ExistingLattice: see ExistingPaillier.
func ExistingLattice(dataDir string) []string {
	return existing(dataDir, LatticeShareFile, LatticePublicFile)
}

func existing(dataDir string, names ...string) []string {
	var found []string
	for _, name := range names {
		p := dirStore(dataDir).path(name)
		if _, err := os.Lstat(p); err == nil || !errors.Is(err, os.ErrNotExist) {
			found = append(found, p)
		}
	}
	return found
}
