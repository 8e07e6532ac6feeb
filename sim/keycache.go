package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/keyring"
)

// keyCacheFormat names the layout and parameters of a cache entry; a
// change to either (the key files, the lattice parameter set, the default
// thresholds) must change it, so that no entry of the old kind is used.
const keyCacheFormat = "v1-bgv13"

// CachedThresholdKeys is ThresholdKeys with the dealt keys kept under dir
// (created 0700 if absent): the first simulation of a member set deals
// them, later ones of the same members and modulus size install copies of
// the same shares instead of searching for safe primes again (seconds of
// CPU per run). It is for simulations only: one operator owns every node,
// sees every share anyway, and the key protects nothing but example data.
// A real consortium's key is never dealt through it (`keys deal` and the
// keygen job write only to the members' data dirs).
//
// dir and each entry must belong to this user and be closed to others
// (mode 0700); otherwise the run fails rather than trust or reuse it.
func CachedThresholdKeys(bits int, dir string) func(names []string) (func(name, dataDir string) error, error) {
	return func(names []string) (func(name, dataDir string) error, error) {
		entry, err := cachedKeys(bits, dir, names)
		if err != nil {
			return nil, err
		}
		return func(name, dataDir string) error {
			if !slices.Contains(names, name) {
				return fmt.Errorf("sim: no key share for %s", name)
			}
			return copyKeys(filepath.Join(entry, name), filepath.Clean(dataDir))
		}, nil
	}
}

// cachedKeys returns the cache entry holding every member's key files
// (MEMBER/keys/...), dealing and storing them first if there is none.
func cachedKeys(bits int, dir string, names []string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("sim: key cache: %w", err)
	}
	if err := private(dir); err != nil {
		return "", err
	}
	entry := filepath.Join(dir, keyCacheName(bits, names))
	if _, err := os.Stat(entry); err == nil {
		return entry, private(entry)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("sim: key cache: %w", err)
	}
	tmp, err := os.MkdirTemp(dir, ".deal-*") // 0700
	if err != nil {
		return "", fmt.Errorf("sim: key cache: %w", err)
	}
	defer os.RemoveAll(tmp) // nothing left to remove once renamed into place
	install, err := ThresholdKeys(bits)(names)
	if err != nil {
		return "", err
	}
	for _, name := range names {
		if err := install(name, filepath.Join(tmp, name)); err != nil {
			return "", err
		}
	}
	// A concurrent run may have stored the same entry first: either is a
	// whole dealt key, so keep the one that is there.
	if err := os.Rename(tmp, entry); err != nil {
		if _, statErr := os.Stat(entry); statErr != nil {
			return "", fmt.Errorf("sim: key cache: %w", err)
		}
	}
	return entry, private(entry)
}

// keyCacheName names an entry by everything the dealt files depend on:
// the format, the modulus size and the sorted member names (the shares
// are assigned in that order, and the names are in the public files).
func keyCacheName(bits int, names []string) string {
	sorted := slices.Sorted(slices.Values(names))
	h := sha256.Sum256([]byte(strings.Join(sorted, "\n")))
	return fmt.Sprintf("%s-%d-%d-%s", keyCacheFormat, bits, len(sorted), hex.EncodeToString(h[:12]))
}

// private fails unless path belongs to this user and no one else may
// read, write or enter it: another user's or an open directory could
// hand a run a key someone else knows, or let them read its shares.
func private(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return fmt.Errorf("sim: key cache: %w", err)
	}
	if !fi.IsDir() || fi.Mode().Perm()&0o077 != 0 || !ownedByMe(fi) {
		return fmt.Errorf("sim: key cache %s must be a directory of this user's with mode 0700 (it is %v): fix it, delete it, or set %s=off", path, fi.Mode(), KeyCacheEnv)
	}
	return nil
}

// copyKeys copies a member's cached key files into its data dir, each
// with the mode keyring gave it (shares 0600).
func copyKeys(from, dataDir string) error {
	for _, name := range []string{keyring.PaillierShareFile, keyring.PaillierPublicFile, keyring.LatticeShareFile, keyring.LatticePublicFile} {
		src := filepath.Join(from, filepath.FromSlash(name))
		fi, err := os.Stat(src)
		if errors.Is(err, fs.ErrNotExist) && strings.HasPrefix(filepath.Base(name), "lattice") {
			continue // more members than the lattice key takes (lattice.MaxMembers)
		}
		if err != nil {
			return fmt.Errorf("sim: key cache entry %s: %w", filepath.Dir(from), err)
		}
		b, err := os.ReadFile(src)
		if err != nil {
			return fmt.Errorf("sim: key cache entry %s: %w", filepath.Dir(from), err)
		}
		dst := filepath.Join(dataDir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			return fmt.Errorf("sim: install key: %w", err)
		}
		if err := os.WriteFile(dst, b, fi.Mode().Perm()); err != nil {
			return fmt.Errorf("sim: install key: %w", err)
		}
	}
	return nil
}

// KeyCacheEnv names the environment variable that places the simulation
// key cache (a directory), or turns it off ("off"); unset, the cache is
// KeyCacheDir's default.
const KeyCacheEnv = "COHORT_SIM_KEY_CACHE"

// KeyCacheDir returns the key cache directory that the value of
// KeyCacheEnv asks for: "" (off) for "off", the value itself for any
// other non-empty value, else os.UserCacheDir()/cohort/sim-keys ("" when
// there is no user cache dir: no cache).
func KeyCacheDir(env string) string {
	switch env {
	case "off":
		return ""
	case "":
		base, err := os.UserCacheDir()
		if err != nil {
			return ""
		}
		return filepath.Join(base, "cohort", "sim-keys")
	}
	return env
}

// SimKeys returns ThresholdKeys(bits), or CachedThresholdKeys(bits, dir)
// when dir is set.
func SimKeys(bits int, dir string) func(names []string) (func(name, dataDir string) error, error) {
	if dir == "" {
		return ThresholdKeys(bits)
	}
	return CachedThresholdKeys(bits, dir)
}
