package job

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cohortdm/cohort/internal/atomicfile"
)

// DirSecrets returns the Secrets of a node's data dir: ReadSecret reads a
// file under dir (refusing names that leave it), WriteSecret replaces one
// atomically with mode 0600, and Parsed caches what it
// parses by the files' names and contents, so a changed file is parsed
// again. The node and jobtest both use it.
func DirSecrets(dir string) Secrets {
	return &dirSecrets{dir: dir, parsed: map[string]*parsedValue{}}
}

type dirSecrets struct {
	dir string
	mu  sync.Mutex
	// parsed maps the files' names and content digest to the parsed value,
	// so a changed file is parsed again.
	parsed map[string]*parsedValue
}

// parsedValue is one cached parse, made once however many callers ask
// for it at the same time: two steps of a node that need the key at once
// (the demo's first jobs) each parsed it, 70-90 ms of CPU apiece.
type parsedValue struct {
	once sync.Once
	v    any
	err  error
}

func (s *dirSecrets) ReadSecret(name string) ([]byte, error) {
	if !filepath.IsLocal(name) {
		return nil, fmt.Errorf("secret name %q is not a path inside the data dir", name)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		return nil, fmt.Errorf("read secret %s: %w", name, s.inDir(err))
	}
	return b, nil
}

// inDir names the paths under the data dir that err's text holds
// relative to it: a kind may pass the error on in a message to its
// coordinator, and the node's own directories are nobody else's business.
// errors.Is and As still see the error it wraps.
func (s *dirSecrets) inDir(err error) error {
	return &dirError{strings.ReplaceAll(err.Error(), filepath.Clean(s.dir)+string(filepath.Separator), ""), err}
}

type dirError struct {
	text string
	err  error
}

func (e *dirError) Error() string { return e.text }
func (e *dirError) Unwrap() error { return e.err }

func (s *dirSecrets) WriteSecret(name string, data []byte) error {
	return s.WriteSecretStream(name, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// SecretStreamer is implemented by Secrets that can write a file from a
// stream (DirSecrets), atomically as WriteSecret does, so that a job can
// keep a file larger than it wants in memory (sjc-predict's per-row
// predictions). WriteSecretFrom uses it.
type SecretStreamer interface {
	WriteSecretStream(name string, write func(w io.Writer) error) error
}

// WriteSecretFrom writes the named secret from what write writes: as a
// stream where s is a SecretStreamer, else buffered and written whole.
func WriteSecretFrom(s Secrets, name string, write func(w io.Writer) error) error {
	if st, ok := s.(SecretStreamer); ok {
		return st.WriteSecretStream(name, write)
	}
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		return err
	}
	return s.WriteSecret(name, buf.Bytes())
}

func (s *dirSecrets) WriteSecretStream(name string, write func(w io.Writer) error) error {
	if !filepath.IsLocal(name) {
		return fmt.Errorf("secret name %q is not a path inside the data dir", name)
	}
	path := filepath.Join(s.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("write secret %s: %w", name, s.inDir(err))
	}
	if err := atomicfile.WriteFrom(path, 0o600, write); err != nil {
		return fmt.Errorf("write secret %s: %w", name, s.inDir(err))
	}
	return nil
}

// ScratchDir is implemented by Secrets kept in a directory (DirSecrets):
// it gives a job the real path of a directory of its scratch, so that it
// can stream files larger than it wants in memory (sjc's spilled
// partitions) rather than write each whole with WriteSecret. The name must
// be under "jobs/JOBID/", which the node removes when the job ends.
type ScratchDir interface {
	// Dir creates the named directory (mode 0700) if need be and returns
	// its path.
	Dir(name string) (string, error)
}

func (s *dirSecrets) Dir(name string) (string, error) {
	if !filepath.IsLocal(name) || !strings.HasPrefix(filepath.ToSlash(name), "jobs/") {
		return "", fmt.Errorf("scratch name %q is not a path under the data dir's jobs/", name)
	}
	path := filepath.Join(s.dir, name)
	if err := os.MkdirAll(path, 0o700); err != nil {
		return "", fmt.Errorf("scratch dir %s: %w", name, err)
	}
	return path, nil
}

func (s *dirSecrets) Parsed(names []string, parse func([][]byte) (any, error)) (any, error) {
	contents := make([][]byte, len(names))
	h := sha256.New()
	for i, name := range names {
		b, err := s.ReadSecret(name)
		if err != nil {
			return nil, err
		}
		contents[i] = b
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(b))
		h.Write(b)
	}
	key := string(h.Sum(nil))
	s.mu.Lock()
	p, ok := s.parsed[key]
	if !ok {
		if len(s.parsed) >= 8 { // key material changes rarely; keep the cache small
			clear(s.parsed)
		}
		p = &parsedValue{}
		s.parsed[key] = p
	}
	s.mu.Unlock()
	p.once.Do(func() { p.v, p.err = parse(contents) })
	if p.err != nil {
		// A failed parse is not kept: the next call tries again.
		s.mu.Lock()
		if s.parsed[key] == p {
			delete(s.parsed, key)
		}
		s.mu.Unlock()
		return nil, p.err
	}
	return p.v, nil
}
