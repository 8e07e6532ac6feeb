// Package testkit is the one home of helpers that the tests of several
// packages share, so that a fix to one reaches every copy. Only _test.go
// files may import it or its subpackages (TestOnlyTestsImport checks), so
// nothing here can reach a production binary.
//
// It depends on paillier alone, so that the internal tests of packages
// below sim (keyring, console, dealerless) and the bench/tcpaillier module
// can use it without an import cycle or new requirements; helpers that
// build specs or start clusters live in testkit/spectest and testkit/simtest.
package testkit

import "github.com/cohortdm/cohort/paillier"

// SmallKeys opts this test binary in to paillier's insecure small moduli
// (paillier.MinTestBits up to 2047 bits), which keep test suites fast.
// Call it once per test binary, from an init or TestMain: the opt-in is
// process-wide. It panics outside test binaries, where paillier refuses.
func SmallKeys() {
	if err := paillier.AllowTestKeySizes(); err != nil {
		panic(err)
	}
}
