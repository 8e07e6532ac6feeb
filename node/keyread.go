package node

import (
	"errors"
	"io/fs"

	"github.com/cohortdm/cohort/keyring"
)

// ReadKeys parses the threshold key installed in the node's data dir, if
// any, into the cache of parsed keys its jobs' steps read it from. An
// in-process cluster that has just installed the key (the demo) calls it
// while its first jobs are admitted, so that the first step that
// decrypts does not begin by parsing the key: 70-90 ms of CPU per node,
// which the demo's quantile paid in its first counting round, on the
// batch's longest chain of rounds. A node that keeps a randomizer pool
// reads the key for it anyway.
func (n *Node) ReadKeys() error {
	if _, err := keyring.ReadPaillier(n.secrets); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
