package testkit

import "os"

// LongEnv is the environment variable that turns on the long form of
// tests whose default form checks the same property on fewer or smaller
// inputs (more random cases, larger tables). The everyday suite stays
// within the 5 minutes of issue 36; scripts/stress-tests.sh sets it, so
// the long forms still run, under load, where the stress step runs.
const LongEnv = "COHORT_LONG_TESTS"

// Long reports whether LongEnv is set to 1.
func Long() bool { return os.Getenv(LongEnv) == "1" }

// Cases is n, or long when LongEnv is set to 1: how many random cases (or
// rows, or rounds) a test runs.
func Cases(n, long int) int {
	if Long() {
		return long
	}
	return n
}
