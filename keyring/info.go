package keyring

import (
	"encoding/json"
	"fmt"
)

// How a key was made.
const (
	MadeDealer     = "dealer"     // by `cohort keys deal` or a test: one process saw every share
	MadeDealerless = "dealerless" // by the keygen job: no member saw another's share
)

// Info is the sidecar of a key's files (PaillierInfoFile, LatticeInfoFile;
// JSON): how the key was made. It is descriptive only: nothing decrypts
// with it, and the key files themselves say everything a job needs.
type Info struct {
	Made    string   `json:"made"`
	KeyID   string   `json:"key_id"`
	Bits    int      `json:"bits,omitempty"`   // Paillier: the modulus size
	Params  string   `json:"params,omitempty"` // lattice: the parameter set (lattice.ParamsBGV13)
	Parties []string `json:"parties"`
	// Threshold is the number of shares that decrypt together (Paillier's
	// t+1, the lattice key's quorum).
	Threshold int    `json:"threshold"`
	Job       string `json:"job,omitempty"`
}

// ParseInfo decodes an info file.
func ParseInfo(b []byte) (*Info, error) {
	var in Info
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("%w: key info: %w", ErrKeys, err)
	}
	if in.Made != MadeDealer && in.Made != MadeDealerless {
		return nil, fmt.Errorf("%w: key info: made %q, want %q or %q", ErrKeys, in.Made, MadeDealer, MadeDealerless)
	}
	return &in, nil
}

// file is the info as the named file (0644: it holds nothing secret).
func (in Info) file(name string) (file, error) {
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return file{}, err
	}
	return file{name, append(b, '\n'), 0o644}, nil
}

// SaveInfo writes a key's info sidecar (PaillierInfoFile or
// LatticeInfoFile) under a node's data dir.
func SaveInfo(dataDir, name string, in Info) error {
	if name != PaillierInfoFile && name != LatticeInfoFile {
		return fmt.Errorf("%w: %s is not a key info file", ErrKeys, name)
	}
	f, err := in.file(name)
	if err != nil {
		return err
	}
	return writeAll(dirStore(dataDir), f)
}

// LoadInfo reads a key's info sidecar from a node's data dir.
func LoadInfo(dataDir, name string) (*Info, error) {
	b, err := dirStore(dataDir).read(name)
	if err != nil {
		return nil, err
	}
	return ParseInfo(b)
}
