package transform

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// ErrExists means a write would replace an existing file.
var ErrExists = errors.New("transform: file exists")

// WriteKey writes k to a new file at path, mode 0600 from the start: a
// temporary file beside it, synced, then linked into place, so a crash
// never leaves half a key and an existing file is never replaced.
func WriteKey(path string, k *Key) error {
	b, err := k.MarshalBinary()
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("transform: write key: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	err = f.Chmod(0o600)
	if err == nil {
		_, err = f.Write(b)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Link(tmp, path)
		if errors.Is(err, os.ErrExist) {
			err = fmt.Errorf("%w: %s", ErrExists, path)
		}
	}
	if err != nil {
		return fmt.Errorf("transform: write key %s: %w", path, err)
	}
	return nil
}

// ReadKey reads and checks the key file at path (ParseKey).
func ReadKey(path string) (*Key, error) {
	b, err := readLimited(path, MaxKeyBytes)
	if err != nil {
		return nil, err
	}
	k, err := ParseKey(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return k, nil
}

// readLimited reads a file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("transform: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("transform: read %s: %w", path, err)
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("transform: %s: larger than %d bytes", path, limit)
	}
	return b, nil
}

// ReadTree reads a miner's tree file at path (ParseTree).
func ReadTree(path string) (*tree.Tree, TreeFormat, error) {
	b, err := readLimited(path, MaxTreeBytes)
	if err != nil {
		return nil, "", err
	}
	t, f, err := ParseTree(b)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return t, f, nil
}

// Schema is the table schema the key was made from: every column with its
// kind, the class as table.Class, for loading the original table again.
func (k *Key) Schema() map[string]table.Kind {
	s := make(map[string]table.Kind, len(k.Columns))
	for _, c := range k.Columns {
		s[c.Name] = c.Kind
	}
	return s
}
