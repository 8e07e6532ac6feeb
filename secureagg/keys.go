package secureagg

import "github.com/cohortdm/cohort/keyring"

// Keys is this party's share of the consortium's threshold Paillier key
// (package keyring owns it, its files and their encodings).
type Keys = keyring.Paillier

// ErrKeys wraps every problem with stored or dealt key material.
var ErrKeys = keyring.ErrKeys
