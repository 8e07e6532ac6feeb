package keyring

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/paillier"
)

// RandomizerSource is what a job's Secrets may also offer: a pool of
// encryption randomisers (paillier.RandomizerPool) for the threshold
// Paillier key installed in the data dir, owned by the node, which fills
// it while it runs no job, bounds it and closes it when it stops or the
// key changes. A job never closes it. Nil means the node keeps none (it is
// turned off, or no key is installed).
type RandomizerSource interface {
	Randomizers() *paillier.RandomizerPool
}

// PaillierRandomizers returns the pool s offers for k's public key, or nil
// when s offers none or its pool serves another key (a key staged but not
// installed, or one installed since k was read). Encryptions drawn from it
// are distributed exactly as PublicKey.Encrypt's (see RandomizerPool).
func PaillierRandomizers(s job.Secrets, k *Paillier) *paillier.RandomizerPool {
	src, ok := s.(RandomizerSource)
	if !ok || k == nil || k.Share == nil || k.Share.Public == nil {
		return nil
	}
	p := src.Randomizers()
	if p == nil || !p.Serves(&k.Public().PublicKey) {
		return nil
	}
	return p
}
