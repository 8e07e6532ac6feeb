package sjc

import (
	"cmp"

	"github.com/cohortdm/cohort/joinprop"
)

// dictLimit is the number of distinct values up to which dictRank finds a
// column's distinct values with a hash map; past it (a column of mostly
// distinct values) sorting a copy is cheaper.
const dictLimit = joinprop.DictLimit

// dictRank dictionary-encodes xs: it returns the sorted distinct values
// and writes each value's rank among them to rank (joinprop.DictRank).
func dictRank[T cmp.Ordered](xs []T, rank []int32) []T { return joinprop.DictRank(xs, rank) }
