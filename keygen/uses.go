package keygen

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Uses: key generation reads no table, so it discloses no data of a party
// (job.Discloser); its messages carry shares and public values of the key
// being generated, declared with no table so that the node's guard lets
// them through while the policy's kinds rule decides whether the node
// takes part at all. The lattice variant's test aggregation also sends
// ciphertexts and decryption shares of constants (no data either).
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	p, err := parseParams(spec)
	if err != nil {
		return nil, err
	}
	uses := []job.Use{{Form: DiscloseShares}, {Form: DiscloseBiprimality}}
	if p.Scheme == SchemeBGV {
		uses = append(uses, job.Use{Form: wire.DiscloseCiphertext})
	}
	return uses, nil
}
