package boost

// WithMaxNodes is c with at most n open nodes to a layout (0: as many as
// fit), for tests of levels that take several layouts.
func WithMaxNodes(c LatticeCrypto, n int) LatticeCrypto {
	c.maxNodes = n
	return c
}
