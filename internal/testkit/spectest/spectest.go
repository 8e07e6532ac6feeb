// Package spectest holds test helpers that build job specs. It is apart
// from testkit so that testkit stays free of job's dependencies, which the
// bench/tcpaillier module does not require. Only _test.go files may import
// it (testkit.TestOnlyTestsImport checks).
package spectest

import (
	"os"
	"testing"

	"github.com/cohortdm/cohort/job"
)

// Write writes text as a job spec at path and loads it, failing tb if
// either fails, so that a test builds its spec the way a user's file is
// read (tables resolved against the spec's directory).
func Write(tb testing.TB, path, text string) *job.Spec {
	tb.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		tb.Fatal(err)
	}
	s, err := job.LoadSpec(path)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
