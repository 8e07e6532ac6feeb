package keygen_test

import "github.com/cohortdm/cohort/internal/testkit"

func init() { testkit.SmallKeys() }
