package node

import (
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
	ma "github.com/multiformats/go-multiaddr"

	"github.com/cohortdm/cohort/policy"
)

// PolicyFileName is the policy `cohort node init` writes beside node.yaml:
// the default policy, every field commented, for the organisation to edit.
const PolicyFileName = "policy.yaml"

// IdentityFile is the node's Ed25519 key inside its data dir.
const IdentityFile = "identity.key"

// LoadIdentity reads the node's private key from its data dir.
func LoadIdentity(dataDir string) (crypto.PrivKey, error) {
	path := filepath.Join(dataDir, IdentityFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: identity key %s: %v (run 'cohort node init')", ErrConfig, path, err)
	}
	k, err := crypto.UnmarshalPrivateKey(b)
	if err != nil {
		return nil, fmt.Errorf("%w: identity key %s: %v", ErrConfig, path, err)
	}
	return k, nil
}

// maxNameLen bounds a party name; names become file names (ledgers, key
// directories) and metric labels.
const maxNameLen = 64

// CheckName reports whether name can name a party: 1 to 64 ASCII letters,
// digits, '.', '_' or '-', starting with a letter or digit. Names become file
// and directory names (DIR/audit/NAME.jsonl, keys/NAME/), so spaces, slashes
// and the like are refused up front rather than failing later.
func CheckName(name string) error {
	if name == "" {
		return errors.New("empty name")
	}
	if len(name) > maxNameLen {
		return fmt.Errorf("name %q is longer than %d characters", name, maxNameLen)
	}
	for i, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || i > 0 && (r == '.' || r == '_' || r == '-')
		if !ok {
			return fmt.Errorf("name %q: use ASCII letters, digits, '.', '_' and '-' only, starting with a letter or digit", name)
		}
	}
	return nil
}

// CheckListen reports whether addr is a libp2p multiaddr, with a hint when
// it is written host:port.
func CheckListen(addr string) error {
	_, err := ma.NewMultiaddr(addr)
	if err == nil {
		return nil
	}
	host, port, splitErr := net.SplitHostPort(addr)
	if splitErr != nil {
		return fmt.Errorf("%q is not a multiaddr (e.g. /ip4/0.0.0.0/tcp/7400): %w", addr, err)
	}
	proto, ip := "ip4", net.ParseIP(host)
	switch {
	case ip == nil:
		host = "0.0.0.0" // listen addresses are interfaces, not names
	case ip.To4() == nil:
		proto = "ip6"
	}
	return fmt.Errorf("%q is not a multiaddr: for TCP write /%s/%s/tcp/%s, for QUIC /%s/%s/udp/%s/quic-v1",
		addr, proto, host, port, proto, host, port)
}

// Init creates a node's data dir with a fresh Ed25519 identity and HTTP API
// token (api.token, 0600) and writes node.yaml beside it. It refuses to overwrite an existing identity, because
// a new key would lock the node out of its consortium. The name and listen
// addresses are checked before anything is written.
func Init(name, dir string, listen []string) (*Config, peer.ID, error) {
	if name == "" {
		return nil, "", errors.New("node init: --name is required")
	}
	if err := CheckName(name); err != nil {
		return nil, "", fmt.Errorf("node init: %w", err)
	}
	for _, a := range listen {
		if err := CheckListen(a); err != nil {
			return nil, "", fmt.Errorf("node init: listen address %w", err)
		}
	}
	keyPath := filepath.Join(dir, IdentityFile)
	if _, err := os.Stat(keyPath); err == nil {
		return nil, "", fmt.Errorf("node init: %s already exists; refusing to replace the node's identity", keyPath)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, "", fmt.Errorf("node init: %w", err)
	}
	sk, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		return nil, "", fmt.Errorf("node init: generate key: %w", err)
	}
	b, err := crypto.MarshalPrivateKey(sk)
	if err != nil {
		return nil, "", fmt.Errorf("node init: %w", err)
	}
	if err := writeFileAtomic(keyPath, b, 0o600); err != nil {
		return nil, "", fmt.Errorf("node init: %w", err)
	}
	id, err := peer.IDFromPrivateKey(sk)
	if err != nil {
		return nil, "", fmt.Errorf("node init: %w", err)
	}
	if _, err := ensureToken(dir); err != nil {
		return nil, "", fmt.Errorf("node init: %w", err)
	}
	if len(listen) == 0 {
		listen = []string{"/ip4/0.0.0.0/tcp/7400", "/ip4/0.0.0.0/udp/7400/quic-v1"}
	}
	// A node made by init is a long-running one: it builds the key's
	// tables at start, so that its memory is at its level once it is up
	// (in-process clusters, cohort demo and cohort sim, keep the lazy
	// default: they run too few jobs to repay the tables).
	cfg := &Config{Name: name, DataDir: ".", Listen: listen, Consortium: "consortium.yaml", TablesDir: "tables", PolicyFile: PolicyFileName,
		PaillierTables: "eager"}
	if err := writeFileAtomic(filepath.Join(dir, PolicyFileName), policy.DefaultYAML, 0o600); err != nil {
		return nil, "", fmt.Errorf("node init: %w", err)
	}
	if err := os.MkdirAll(filepath.Join(dir, cfg.TablesDir), 0o700); err != nil {
		return nil, "", fmt.Errorf("node init: %w", err)
	}
	if err := cfg.Save(filepath.Join(dir, "node.yaml")); err != nil {
		return nil, "", fmt.Errorf("node init: %w", err)
	}
	return cfg, id, nil
}
