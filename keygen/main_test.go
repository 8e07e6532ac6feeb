package keygen_test

import "github.com/cohortdm/cohort/paillier"

func init() {
	if err := paillier.AllowTestKeySizes(); err != nil {
		panic(err)
	}
}
