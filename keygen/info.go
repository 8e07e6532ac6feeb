package keygen

import (
	"encoding/json"
	"fmt"
)

// InfoFile is the sidecar of the threshold key files in a node's data
// dir: how the key was made. `cohort keys deal` writes one with Made
// "dealer", the keygen job one with Made "dealerless".
const InfoFile = "keys/threshold.info"

// How a key was made.
const (
	MadeDealer     = "dealer"
	MadeDealerless = "dealerless"
)

// Info is the content of InfoFile (JSON).
type Info struct {
	Made      string   `json:"made"`
	KeyID     string   `json:"key_id"`
	Bits      int      `json:"bits"`
	Parties   []string `json:"parties"`
	Threshold int      `json:"threshold"` // shares that decrypt together
	Job       string   `json:"job,omitempty"`
}

// ParseInfo decodes InfoFile.
func ParseInfo(b []byte) (*Info, error) {
	var in Info
	if err := json.Unmarshal(b, &in); err != nil {
		return nil, fmt.Errorf("keygen: %s: %w", InfoFile, err)
	}
	if in.Made != MadeDealer && in.Made != MadeDealerless {
		return nil, fmt.Errorf("keygen: %s: made %q, want %q or %q", InfoFile, in.Made, MadeDealer, MadeDealerless)
	}
	return &in, nil
}
