package testkit

import (
	"os"
	"strings"
)

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

// LoadAverage is the machine's 1-, 5- and 15-minute load averages as
// /proc/loadavg gives them ("0.52 0.61 0.70"), or "unknown": a figure a
// test prints is read beside the load it ran under.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}
