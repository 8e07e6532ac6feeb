package main

import (
	"crypto/rand"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/sim"
)

// simKeyBits is the modulus size dealt for simulations and the demo.
const simKeyBits = 2048

// consortiumKeys prepares each simulated node's threshold key share.
func consortiumKeys(names []string) (func(name, dataDir string) error, error) {
	return sim.ThresholdKeys(simKeyBits)(names)
}

func (a *app) keysCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "keys", Short: "Set up the consortium's threshold key"}
	var members string
	var bits, threshold int
	var out string
	deal := &cobra.Command{
		Use:   "deal --members a,b,c --out DIR",
		Short: "Deal a threshold Paillier key (trusted dealer) and write each member's share",
		Long: `deal generates the consortium's threshold Damgard-Jurik key and writes, for every member,
DIR/MEMBER/keys/threshold.pub and DIR/MEMBER/keys/threshold.share (mode 0600). Copy each
MEMBER/keys directory into that member's data dir and delete the rest: the dealer sees every
share, so run it on a machine the consortium trusts, or use dealerless generation once it exists.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			names := strings.Split(members, ",")
			if members == "" || len(names) < 2 {
				return fmt.Errorf("--members needs at least two comma-separated names")
			}
			start := time.Now()
			pk, keys, err := secureagg.Deal(rand.Reader, bits, names, threshold)
			if err != nil {
				return err
			}
			for name, k := range keys {
				if err := secureagg.SaveKeys(filepath.Join(out, name), k); err != nil {
					return err
				}
			}
			if a.format == "json" {
				return a.printJSON(map[string]any{"parties": pk.Parties, "threshold": pk.Threshold, "bits": pk.N.BitLen(), "out": out})
			}
			fmt.Fprintf(a.stdout, "dealt a %d-bit key: any %d of %d members decrypt (%.1fs); shares under %s/MEMBER/keys\n",
				pk.N.BitLen(), pk.Threshold+1, pk.Parties, time.Since(start).Seconds(), out)
			return nil
		},
	}
	deal.Flags().StringVar(&members, "members", "", "comma-separated member names, as in the consortium file")
	deal.Flags().IntVar(&bits, "bits", 2048, "modulus size in bits (2048, 3072 or 4096)")
	deal.Flags().IntVar(&threshold, "threshold", 0, "t: any t+1 shares decrypt (default ⌊(N−1)/2⌋, an honest majority)")
	deal.Flags().StringVar(&out, "out", "", "directory to write MEMBER/keys/ into")
	_ = deal.MarkFlagRequired("out")
	cmd.AddCommand(deal)
	return cmd
}
