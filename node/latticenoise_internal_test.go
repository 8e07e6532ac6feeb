package node

import (
	"log/slog"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
)

// The node's lattice pool also draws its decryption shares' smudging
// noise ahead, 2 × lattice_pool polynomials: the cohort_lattice_noise_ready
// gauge reports them, and the noise filler is paused with the rest while
// the node takes part in a job.
func TestLatticeNoiseGaugeAndPause(t *testing.T) {
	dir := t.TempDir()
	secrets := job.DirSecrets(dir)
	r := newRandomizers(0, false, secrets, slog.New(slog.DiscardHandler))
	r.zeros = newLatticeZeros(2, secrets, slog.New(slog.DiscardHandler))
	keys, err := keyring.DealLattice([]string{"a", "b", "c"}, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyring.SaveLattice(dir, keys["a"]); err != nil {
		t.Fatal(err)
	}
	r.start(t.Context())
	defer r.zeros.close()
	if keyring.LatticeZeros(randomizerSecrets{secrets, r}, keys["a"]) == nil {
		t.Fatal("no pool for the installed key")
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(r)
	deadline := time.Now().Add(2 * time.Minute) // the filler's progress is the event
	for gaugeValue(t, reg, "cohort_lattice_noise_ready") != 4 {
		if time.Now().After(deadline) {
			t.Fatal("the noise of a pool of 2 is not 4 polynomials after 2 minutes")
		}
		time.Sleep(time.Millisecond)
	}
	if st, _ := latticeZeroStats(r.zeros); st.Noise.Ready != 4 {
		t.Fatalf("the gauge says 4, the pool holds %d", st.Noise.Ready)
	}
	r.setBusy(true)
	if st, ok := latticeZeroStats(r.zeros); !ok || !st.Noise.Paused {
		t.Fatal("the noise filler runs while the node takes part in a job")
	}
	r.setBusy(false)
	if st, _ := latticeZeroStats(r.zeros); st.Noise.Paused {
		t.Fatal("the noise filler stays paused after the job")
	}
}

// gaugeValue is the value of reg's gauge called name.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name && len(mf.GetMetric()) == 1 {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no gauge %s", name)
	return 0
}
