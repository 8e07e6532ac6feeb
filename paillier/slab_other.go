//go:build !unix

package paillier

import "math/big"

// newSlab returns nil where anonymous mappings are not offered: the
// tables then live on the Go heap.
func newSlab(int) []big.Word { return nil }

func freeSlab([]big.Word) {}
