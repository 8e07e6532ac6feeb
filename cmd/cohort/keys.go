package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/sim"
)

// simKeyBits is the modulus size dealt for simulations and the demo.
const simKeyBits = 2048

// dealBitsOK reports whether `keys deal` accepts a modulus size for a real
// consortium: 2048, 3072 or 4096 bits.
func dealBitsOK(bits int) bool { return bits == 2048 || bits == 3072 || bits == 4096 }

// consortiumKeys prepares each simulated node's threshold key share.
func consortiumKeys(names []string) (func(name, dataDir string) error, error) {
	return sim.ThresholdKeys(simKeyBits)(names)
}

// defaultThreshold is the honest-majority threshold for n members: the
// number of members whose shares decrypt, ⌊(n−1)/2⌋+1, so that the members
// who may collude without learning anything (one fewer) are a minority.
func defaultThreshold(n int) int { return (n-1)/2 + 1 }

func (a *app) keysCmd() *cobra.Command {
	cmd := groupCmd("keys", "Set up the consortium's threshold key")
	var members string
	var bits, threshold int
	var out string
	var force bool
	deal := &cobra.Command{
		Use:   "deal --members a,b,c --out DIR",
		Short: "Deal a threshold Paillier key (trusted dealer) and write each member's share",
		Long: `deal generates the consortium's threshold Damgard-Jurik key and writes, for every member,
DIR/MEMBER/keys/threshold.pub and DIR/MEMBER/keys/threshold.share (mode 0600). Copy each
MEMBER/keys directory into that member's data dir and delete the rest: the dealer sees every
share, so run it on a machine the consortium trusts, or use dealerless generation once it exists.

The threshold is the number of members whose shares are needed to decrypt: with
--threshold K, any K of the N members decrypt together and any K-1 learn nothing. The
default is an honest majority, K = floor((N-1)/2)+1 (2 of 3, 3 of 5). A threshold of 1
would let every member decrypt alone and is refused; with two members use --threshold 2.

deal refuses to replace existing key files under DIR unless --force is given: a node
whose share no longer matches the others' cannot take part in decryption.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			var names []string
			for _, n := range strings.Split(members, ",") {
				if n = strings.TrimSpace(n); n != "" {
					names = append(names, n)
				}
			}
			if len(names) < 2 {
				return fmt.Errorf("--members needs at least two comma-separated names")
			}
			for _, n := range names {
				if err := node.CheckName(n); err != nil {
					return fmt.Errorf("--members: %w", err)
				}
			}
			if !dealBitsOK(bits) {
				return fmt.Errorf("--bits %d: use 2048, 3072 or 4096 (smaller moduli are not safe for a consortium key)", bits)
			}
			k := threshold
			if !cmd.Flags().Changed("threshold") {
				k = defaultThreshold(len(names))
			}
			switch {
			case k < 1 || k > len(names):
				return fmt.Errorf("--threshold %d: the number of members needed to decrypt must be between 2 and the %d members", k, len(names))
			case k == 1 && cmd.Flags().Changed("threshold"):
				return fmt.Errorf("--threshold 1 would let any single member decrypt alone; use 2 or more")
			case k == 1:
				return fmt.Errorf("with %d members the honest-majority threshold is 1, which would let either member decrypt alone; "+
					"pass --threshold 2 (both members needed to decrypt, so neither may be down during a job)", len(names))
			}
			if !force {
				if existing := existingKeys(out, names); len(existing) > 0 {
					more := ""
					if len(existing) > 1 {
						more = fmt.Sprintf(" and %d more", len(existing)-1)
					}
					return fmt.Errorf("key files already exist (%s%s); refusing to overwrite them without --force", existing[0], more)
				}
			}
			start := time.Now()
			// secureagg counts t, the largest coalition that learns nothing: K−1.
			pk, keys, err := secureagg.Deal(rand.Reader, bits, names, k-1)
			if err != nil {
				return fmt.Errorf("deal: %w", err)
			}
			if got := pk.Threshold + 1; got != k {
				return fmt.Errorf("deal: key needs %d shares, want %d", got, k) // cannot happen for k >= 2
			}
			sorted := slices.Sorted(slices.Values(names))
			for _, name := range sorted {
				if err := secureagg.SaveKeys(filepath.Join(out, name), keys[name]); err != nil {
					return fmt.Errorf("write %s's key files: %w", name, err)
				}
			}
			if a.format == "json" {
				return a.printJSON(map[string]any{"members": sorted, "parties": pk.Parties, "threshold": k, "bits": pk.N.BitLen(), "out": out})
			}
			fmt.Fprintf(a.stdout, "dealt a %d-bit key: threshold %d, any %d of the %d members decrypt together (%.1fs); shares under %s/MEMBER/keys\n",
				pk.N.BitLen(), k, k, pk.Parties, time.Since(start).Seconds(), out)
			return nil
		},
	}
	deal.Flags().StringVar(&members, "members", "", "comma-separated member names, as in the consortium file")
	deal.Flags().IntVar(&bits, "bits", 2048, "modulus size in bits: 2048, 3072 or 4096")
	deal.Flags().IntVar(&threshold, "threshold", 0, "members needed to decrypt, K of N (default ⌊(N−1)/2⌋+1, an honest majority)")
	deal.Flags().StringVar(&out, "out", "", "directory to write MEMBER/keys/ into")
	deal.Flags().BoolVar(&force, "force", false, "overwrite existing key files under --out")
	_ = deal.MarkFlagRequired("out")
	cmd.AddCommand(deal)
	return cmd
}

// existingKeys lists the key files that dealing into out would replace.
func existingKeys(out string, names []string) []string {
	var found []string
	for _, name := range names {
		for _, f := range []string{secureagg.ShareFile, secureagg.PublicKeyFile} {
			p := filepath.Join(out, name, f)
			if _, err := os.Lstat(p); err == nil || !errors.Is(err, fs.ErrNotExist) {
				found = append(found, p)
			}
		}
	}
	return found
}
