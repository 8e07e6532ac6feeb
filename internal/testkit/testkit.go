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

import (
	"flag"
	"strconv"

	"github.com/cohortdm/cohort/paillier"
)

// SmallKeys opts this test binary in to paillier's insecure small moduli
// (paillier.MinTestBits up to 2047 bits), which keep test suites fast.
// Call it once per test binary, from an init or TestMain: the opt-in is
// process-wide. It panics outside test binaries, where paillier refuses.
func SmallKeys() {
	if err := paillier.AllowTestKeySizes(); err != nil {
		panic(err)
	}
}

// WaitingParallel lets n parallel tests of this test binary run at once
// (t.Parallel), instead of go test's default of GOMAXPROCS, unless the
// command line sets -test.parallel (-parallel) itself. It is for packages
// whose tests spend their time waiting on protocol deadlines (a hop's
// timeout, a dropped party's silence), not computing: two at a time leaves
// two cores idle for most of the run. Call it from TestMain before m.Run;
// it parses the command line.
func WaitingParallel(n int) {
	if !flag.Parsed() {
		flag.Parse()
	}
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set {
		if err := flag.Set("test.parallel", strconv.Itoa(n)); err != nil {
			panic(err)
		}
	}
}
