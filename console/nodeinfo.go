package console

import (
	"cmp"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cohortdm/cohort/api"
	"github.com/cohortdm/cohort/internal/buildinfo"
	"github.com/cohortdm/cohort/keyring"
)

// The consortium and node views.

type consortiumData struct {
	Status api.Status
	Cons   Consortium
}

func (c *Console) consortiumPage(r *http.Request) (*view, error) {
	d := consortiumData{Status: c.node.Status(), Cons: c.node.Consortium()}
	slices.Reverse(d.Cons.Events) // newest first
	return &view{page: "consortium", title: "Consortium", nav: "consortium", live: true, data: d}, nil
}

type nodeData struct {
	Status   api.Status
	Build    buildinfo.Info
	Started  time.Time
	Uptime   string
	DataDir  string
	Use      dirUse
	Keys     keyStatus
	Ledger   ledgerState
	Warnings []Warning
}

func (c *Console) nodePage(r *http.Request) (*view, error) {
	d := nodeData{Status: c.node.Status(), Build: buildinfo.Read(c.opts.Version), Started: c.started, Uptime: duration(time.Since(c.started)),
		DataDir: c.opts.DataDir, Use: c.files.use(), Keys: c.files.keys(), Warnings: c.opts.Warnings.Recent()}
	c.ledger.read(func(l *ledgerIndex) { d.Ledger = l.state() })
	return &view{page: "node", title: "Node", nav: "node", data: d}, nil
}

// fileCache reads the data dir for the node view at most every
// fileCacheTTL: its use, and the threshold key's status, which it loads
// again only when the key files change (loading checks the key: about
// 0.1 s for 2048 bits).
type fileCache struct {
	dir     string
	mu      sync.Mutex
	at      time.Time
	usage   dirUse
	keyInfo keyStatus
	keysSig string // the key files' names, sizes and times when keyInfo was read
}

const fileCacheTTL = 10 * time.Second

func newFileCache(dir string) *fileCache { return &fileCache{dir: dir} }

// dirUse is the data dir's size, per top-level entry.
type dirUse struct {
	Total int64
	Parts []dirPart
	Err   string
}

type dirPart struct {
	Name  string
	Bytes int64
}

// keyStatus is what the node holds of the consortium's threshold key.
type keyStatus struct {
	Present bool
	Err     string
	// Made is how the key was made: dealt or generated (keyring.Info).
	Made, KeyID, Job string
	Bits, Threshold  int
	Members          []string
	Index            int
}

func (f *fileCache) refresh() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if time.Since(f.at) < fileCacheTTL && !f.at.IsZero() {
		return
	}
	f.at = time.Now()
	f.usage = measure(f.dir)
	if sig := keyFilesSig(f.dir); sig != f.keysSig || sig == "" {
		f.keyInfo, f.keysSig = readKeys(f.dir), sig
	}
}

// keyFilesSig names the key files' state: each file of the keys directory
// with its size and modification time ("" when there is none to read).
func keyFilesSig(dir string) string {
	entries, err := os.ReadDir(filepath.Join(dir, "keys"))
	if err != nil {
		return ""
	}
	var b strings.Builder
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			fmt.Fprintf(&b, "%s %d %d\n", e.Name(), fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return b.String()
}

func (f *fileCache) use() dirUse     { f.refresh(); return f.usage }
func (f *fileCache) keys() keyStatus { f.refresh(); return f.keyInfo }

func measure(dir string) dirUse {
	var u dirUse
	if dir == "" {
		return u
	}
	sizes := map[string]int64{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // a file that went away while walking
		}
		if d.Type().IsRegular() {
			if fi, err := d.Info(); err == nil {
				rel, _ := filepath.Rel(dir, p)
				top := filepath.ToSlash(rel)
				if i := strings.IndexByte(top, '/'); i >= 0 {
					top = top[:i+1]
				}
				sizes[top] += fi.Size()
				u.Total += fi.Size()
			}
		}
		return nil
	})
	if err != nil {
		u.Err = err.Error()
	}
	for name, n := range sizes {
		u.Parts = append(u.Parts, dirPart{name, n})
	}
	slices.SortFunc(u.Parts, func(a, b dirPart) int { return cmp.Or(cmp.Compare(b.Bytes, a.Bytes), strings.Compare(a.Name, b.Name)) })
	return u
}

// readKeys loads the key files as the node's jobs do (secureagg) and the
// sidecar that says how the key was made (keyring.PaillierInfoFile).
func readKeys(dir string) keyStatus {
	var s keyStatus
	if dir == "" {
		return s
	}
	keys, err := keyring.LoadPaillier(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return s
	}
	s.Present = true
	if err != nil {
		s.Err = err.Error()
		return s
	}
	pk := keys.Public()
	s.KeyID, s.Bits, s.Threshold = hex.EncodeToString(pk.KeyID[:]), pk.N.BitLen(), pk.Threshold+1
	s.Members, s.Index, s.Made = keys.Members, keys.Share.Index, "unknown (no "+keyring.PaillierInfoFile+")"
	b, err := os.ReadFile(filepath.Join(dir, keyring.PaillierInfoFile))
	if err != nil {
		return s
	}
	info, err := keyring.ParseInfo(b)
	switch {
	case err != nil:
		s.Err = err.Error()
	case info.KeyID != s.KeyID:
		s.Err = keyring.PaillierInfoFile + " describes key " + info.KeyID + ", not the installed key"
	default:
		s.Made, s.Job = info.Made, info.Job
	}
	return s
}
