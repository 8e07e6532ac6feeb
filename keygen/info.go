package keygen

import "github.com/cohortdm/cohort/keyring"

// The key's info sidecar is package keyring's; these names forward to it.
const (
	// InfoFile is the sidecar of the threshold key files.
	InfoFile = keyring.PaillierInfoFile
	// How a key was made.
	MadeDealer     = keyring.MadeDealer
	MadeDealerless = keyring.MadeDealerless
)

// Info is the content of InfoFile (keyring.Info).
type Info = keyring.Info

// ParseInfo decodes InfoFile (keyring.ParseInfo).
func ParseInfo(b []byte) (*Info, error) { return keyring.ParseInfo(b) }
