//go:build !amd64 || purego

package mont

import "math/big"

func step(t, a, m []big.Word, bi, minv big.Word) { stepGeneric(t, a, m, bi, minv) }
