//go:build amd64 && !purego

package mont

import "math/big"

// step is one step of Mul (stepGeneric, in step_amd64.s): t = (t + a·bi
// + u·m)/2^64 over len(a) words, t of len(a)+1.
//
//go:noescape
func step(t, a, m []big.Word, bi, minv big.Word)
