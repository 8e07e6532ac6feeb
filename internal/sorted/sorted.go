// Package sorted holds the merge walks over ascending slices that several
// packages need (itemset tid lists, join-key sets, bicluster rows), written
// once.
package sorted

import "cmp"

// AppendIntersect appends a ∩ b, both ascending and without repeats, to
// out in ascending order.
func AppendIntersect[T cmp.Ordered](out, a, b []T) []T {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			out = append(out, a[i])
			i++
			j++
		}
	}
	return out
}

// CountIntersect is len(a ∩ b) for ascending a and b without repeats,
// without building it.
func CountIntersect[T cmp.Ordered](a, b []T) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] < b[j]:
			i++
		case a[i] > b[j]:
			j++
		default:
			n++
			i++
			j++
		}
	}
	return n
}
