package node

import (
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"
)

// identityFile is the node's Ed25519 key inside its data dir.
const identityFile = "identity.key"

// LoadIdentity reads the node's private key from its data dir.
func LoadIdentity(dataDir string) (crypto.PrivKey, error) {
	path := filepath.Join(dataDir, identityFile)
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

// Init creates a node's data dir with a fresh Ed25519 identity and writes
// node.yaml beside it. It refuses to overwrite an existing identity, because
// a new key would lock the node out of its consortium.
func Init(name, dir string, listen []string) (*Config, peer.ID, error) {
	if name == "" {
		return nil, "", errors.New("node init: --name is required")
	}
	keyPath := filepath.Join(dir, identityFile)
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
	if len(listen) == 0 {
		listen = []string{"/ip4/0.0.0.0/tcp/7400", "/ip4/0.0.0.0/udp/7400/quic-v1"}
	}
	cfg := &Config{Name: name, DataDir: ".", Listen: listen, Consortium: "consortium.yaml", TablesDir: "tables"}
	if err := os.MkdirAll(filepath.Join(dir, cfg.TablesDir), 0o700); err != nil {
		return nil, "", fmt.Errorf("node init: %w", err)
	}
	if err := cfg.Save(filepath.Join(dir, "node.yaml")); err != nil {
		return nil, "", fmt.Errorf("node init: %w", err)
	}
	return cfg, id, nil
}
