package keygen

import "github.com/cohortdm/cohort/job"

// Uses: key generation reads no table, so it discloses no data of a party
// (job.Discloser); its messages carry shares and public values of the key
// being generated, declared with no table so that the node's guard lets
// them through while the policy's kinds rule decides whether the node
// takes part at all.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	if err := (Kind{}).Validate(spec); err != nil {
		return nil, err
	}
	return []job.Use{{Form: DiscloseShares}, {Form: DiscloseBiprimality}}, nil
}
