package main

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"gopkg.in/yaml.v3"

	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
)

// simKeyBits is the modulus size dealt for simulations and the demo.
const simKeyBits = 2048

// dealBitsOK reports whether `keys deal` accepts a modulus size for a real
// consortium: 2048, 3072 or 4096 bits.
func dealBitsOK(bits int) bool { return bits == 2048 || bits == 3072 || bits == 4096 }

// consortiumKeys prepares each simulated node's key shares, from the
// simulation key cache that $COHORT_SIM_KEY_CACHE places or turns off
// (sim.KeyCacheDir).
func (a *app) consortiumKeys() func(names []string) (func(name, dataDir string) error, error) {
	return sim.SimKeys(simKeyBits, sim.KeyCacheDir(a.getenv(sim.KeyCacheEnv)))
}

// defaultThreshold is the honest-majority threshold for n members: the
// number of members whose shares decrypt, ⌊(n−1)/2⌋+1, so that the members
// who may collude without learning anything (one fewer) are a minority.
func defaultThreshold(n int) int { return (n-1)/2 + 1 }

func (a *app) keysCmd() *cobra.Command {
	cmd := groupCmd("keys", "Set up the consortium's threshold key")
	cmd.AddCommand(a.keysDealCmd(), a.keysGenerateCmd(), a.keysStatusCmd())
	return cmd
}

// dealOptions are the flags of `keys deal`.
type dealOptions struct {
	members, scheme, out string
	bits, threshold      int
	force                bool
}

func (a *app) keysDealCmd() *cobra.Command {
	var o dealOptions
	deal := &cobra.Command{
		Use:   "deal --members a,b,c --out DIR",
		Short: "Deal the threshold Paillier key (--scheme bgv: the lattice key) as a trusted dealer; write each member's share",
		Long: `deal generates the consortium's threshold Damgard-Jurik key and writes, for every member,
DIR/MEMBER/keys/threshold.pub and DIR/MEMBER/keys/threshold.share (mode 0600). Copy each
MEMBER/keys directory into that member's data dir and delete the rest: the dealer sees every
share, so run it on a machine the consortium trusts. For 3 or more members the default is
dealerless generation on the running nodes ('cohort keys generate'), where no one ever sees
the factors of the modulus or another member's share; the dealer remains for two members
and for tests and demos.

The threshold is the number of members whose shares are needed to decrypt: with
--threshold K, any K of the N members decrypt together and any K-1 learn nothing. The
default is an honest majority, K = floor((N-1)/2)+1 (2 of 3, 3 of 5). A threshold of 1
would let every member decrypt alone and is refused; with two members use --threshold 2.

With --scheme bgv it writes the consortium's lattice key instead (DIR/MEMBER/keys/lattice.pub
and lattice.share, 0600; multiparty BGV, secure aggregation's lattice backend), generated in
this one process; its threshold is the quorum of shares that decrypt (the same default).
The keygen job with params {scheme: bgv} generates it on the running nodes without a dealer.

deal refuses to replace existing key files under DIR unless --force is given: a node
whose share no longer matches the others' cannot take part in decryption.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			names, k, err := o.check(cmd.Flags().Changed("threshold"))
			if err != nil {
				return err
			}
			if o.scheme == "bgv" {
				return a.dealLattice(names, k, o.out)
			}
			return a.dealPaillier(names, k, o.bits, o.out)
		},
	}
	deal.Flags().StringVar(&o.members, "members", "", "comma-separated member names, as in the consortium file")
	deal.Flags().StringVar(&o.scheme, "scheme", "paillier", "paillier (threshold Paillier) or bgv (the lattice key)")
	deal.Flags().IntVar(&o.bits, "bits", 2048, "modulus size in bits: 2048, 3072 or 4096")
	deal.Flags().IntVar(&o.threshold, "threshold", 0, "members needed to decrypt, K of N (default ⌊(N−1)/2⌋+1, an honest majority)")
	deal.Flags().StringVar(&o.out, "out", "", "directory to write MEMBER/keys/ into")
	deal.Flags().BoolVar(&o.force, "force", false, "overwrite existing key files under --out")
	_ = deal.MarkFlagRequired("out")
	return deal
}

// check validates the flags of `keys deal` and returns the members and the
// threshold K (thresholdSet: --threshold was given).
func (o *dealOptions) check(thresholdSet bool) ([]string, int, error) {
	var names []string
	for _, n := range strings.Split(o.members, ",") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, n)
		}
	}
	if len(names) < 2 {
		return nil, 0, fmt.Errorf("--members needs at least two comma-separated names")
	}
	for _, n := range names {
		if err := node.CheckName(n); err != nil {
			return nil, 0, fmt.Errorf("--members: %w", err)
		}
	}
	if o.scheme != "paillier" && o.scheme != "bgv" {
		return nil, 0, fmt.Errorf("--scheme %q: use paillier or bgv", o.scheme)
	}
	if !dealBitsOK(o.bits) {
		return nil, 0, fmt.Errorf("--bits %d: use 2048, 3072 or 4096 (smaller moduli are not safe for a consortium key)", o.bits)
	}
	k := o.threshold
	if !thresholdSet {
		k = defaultThreshold(len(names))
	}
	switch {
	case k < 1 || k > len(names):
		return nil, 0, fmt.Errorf("--threshold %d: the number of members needed to decrypt must be between 2 and the %d members", k, len(names))
	case k == 1 && thresholdSet:
		return nil, 0, fmt.Errorf("--threshold 1 would let any single member decrypt alone; use 2 or more")
	case k == 1:
		return nil, 0, fmt.Errorf("with %d members the honest-majority threshold is 1, which would let either member decrypt alone; "+
			"pass --threshold 2 (both members needed to decrypt, so neither may be down during a job)", len(names))
	}
	if !o.force {
		if existing := existingKeys(o.out, names, o.scheme); len(existing) > 0 {
			more := ""
			if len(existing) > 1 {
				more = fmt.Sprintf(" and %d more", len(existing)-1)
			}
			return nil, 0, fmt.Errorf("key files already exist (%s%s); refusing to overwrite them without --force", existing[0], more)
		}
	}
	return names, k, nil
}

// dealPaillier deals the threshold Paillier key over names, any k of them
// decrypting, and writes each member's files under out/MEMBER.
func (a *app) dealPaillier(names []string, k, bits int, out string) error {
	start := time.Now()
	// secureagg counts t, the largest coalition that learns nothing: K−1.
	pk, keys, err := keyring.Deal(rand.Reader, bits, names, k-1)
	if err != nil {
		return fmt.Errorf("deal: %w", err)
	}
	if got := pk.Threshold + 1; got != k {
		return fmt.Errorf("deal: key needs %d shares, want %d", got, k) // cannot happen for k >= 2
	}
	sorted := slices.Sorted(slices.Values(names))
	for _, name := range sorted {
		if err := keyring.SavePaillier(filepath.Join(out, name), keys[name]); err != nil {
			return fmt.Errorf("write %s's key files: %w", name, err)
		}
		if err := keyring.SaveInfo(filepath.Join(out, name), keyring.PaillierInfoFile, keyring.Info{Made: keyring.MadeDealer,
			KeyID: hex.EncodeToString(pk.KeyID[:]), Bits: pk.N.BitLen(), Parties: sorted, Threshold: k}); err != nil {
			return fmt.Errorf("write %s's key files: %w", name, err)
		}
	}
	if a.format == "json" {
		return a.printJSON(map[string]any{"members": sorted, "parties": pk.Parties, "threshold": k, "bits": pk.N.BitLen(), "out": out})
	}
	fmt.Fprintf(a.stdout, "dealt a %d-bit key: threshold %d, any %d of the %d members decrypt together (%.1fs); shares under %s/MEMBER/keys\n",
		pk.N.BitLen(), k, k, pk.Parties, time.Since(start).Seconds(), out)
	return nil
}

// dealLattice deals the consortium's lattice key over names with a quorum
// of k and writes each member's files under out/MEMBER.
func (a *app) dealLattice(names []string, k int, out string) error {
	if len(names) > lattice.MaxMembers {
		return fmt.Errorf("--members: a lattice key has at most %d members", lattice.MaxMembers)
	}
	start := time.Now()
	keys, err := keyring.DealLattice(names, k)
	if err != nil {
		return fmt.Errorf("deal: %w", err)
	}
	sorted := slices.Sorted(slices.Values(names))
	for _, name := range sorted {
		dir := filepath.Join(out, name)
		if err := keyring.SaveLattice(dir, keys[name]); err != nil {
			return fmt.Errorf("write %s's key files: %w", name, err)
		}
		if err := keyring.SaveInfo(dir, keyring.LatticeInfoFile, keyring.LatticeInfo(keys[name], keyring.MadeDealer, "")); err != nil {
			return fmt.Errorf("write %s's key files: %w", name, err)
		}
	}
	id := keys[sorted[0]].ID()
	if a.format == "json" {
		return a.printJSON(map[string]any{"members": sorted, "scheme": "bgv", "threshold": k, "params": lattice.ParamsBGV13,
			"key_id": hex.EncodeToString(id[:]), "out": out})
	}
	fmt.Fprintf(a.stdout, "dealt a lattice key (%s): any %d of the %d members decrypt together (%.1fs); shares under %s/MEMBER/keys\n",
		lattice.ParamsBGV13, k, len(sorted), time.Since(start).Seconds(), out)
	return nil
}

// keygenSpec is the job spec of dealerless generation over members.
func keygenSpec(members []string, bits int, scheme string) ([]byte, error) {
	type party struct {
		Name string `yaml:"name"`
	}
	spec := struct {
		Kind    string         `yaml:"kind"`
		Parties []party        `yaml:"parties"`
		Params  map[string]any `yaml:"params"`
	}{Kind: "keygen", Params: map[string]any{"bits": bits, "scheme": scheme}}
	for _, m := range members {
		spec.Parties = append(spec.Parties, party{Name: m})
	}
	return yaml.Marshal(&spec)
}

func (a *app) keysGenerateCmd() *cobra.Command {
	var config, apiAddr, scheme string
	var bits int
	cmd := &cobra.Command{
		Use:   "generate --config node.yaml [--scheme bgv]",
		Short: "Generate the consortium's threshold key on the running nodes, without a dealer",
		Long: `generate submits a keygen job over every member of the consortium to the running node and
waits for it. The members generate a shared RSA modulus together (Boneh-Franklin: no member
learns its factors) and convert it to threshold decryption shares; each node installs its
share in its data dir (keys/threshold.share, keys/threshold.pub, keys/threshold.info) only
once every member holds the same verified key. It needs 3 or more members (an honest
majority); with two, use 'cohort keys deal --threshold 2'. The threshold is ⌊(N−1)/2⌋+1.

With --scheme bgv it generates the lattice key of secure aggregation's lattice backend
instead (keys/lattice.share, keys/lattice.pub, keys/lattice.info; seconds, not minutes).

Run it while no other job runs: a job that decrypts while the key is replaced fails.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if !dealBitsOK(bits) {
				return fmt.Errorf("--bits %d: use 2048, 3072 or 4096", bits)
			}
			if scheme != "paillier" && scheme != "bgv" {
				return fmt.Errorf("--scheme %q: use paillier or bgv", scheme)
			}
			cfg, err := node.LoadConfig(config)
			if err != nil {
				return configHint(err, config, false)
			}
			cons, err := node.LoadConsortium(cfg.Consortium)
			if err != nil {
				return err
			}
			members := cons.Names()
			if len(members) < 3 {
				return fmt.Errorf("the consortium has %d members; dealerless generation needs 3 or more (deal the key with 'cohort keys deal --threshold 2')", len(members))
			}
			c, err := a.newClient(config, apiAddr)
			if err != nil {
				return err
			}
			var resp struct{ ID string }
			spec, err := keygenSpec(members, bits, scheme)
			if err != nil {
				return err
			}
			if _, err := c.do(cmd.Context(), "POST", "/v1/jobs", spec, &resp); err != nil {
				return fmt.Errorf("submit keygen: %w", err)
			}
			return a.follow(cmd.Context(), c, resp.ID)
		},
	}
	a.configFlag(cmd, false, &config, "node.yaml of the node to talk to")
	cmd.Flags().StringVar(&apiAddr, "api", "", "talk to the node's HTTP listener instead: HOST:PORT")
	cmd.Flags().IntVar(&bits, "bits", 2048, "modulus size in bits: 2048, 3072 or 4096")
	cmd.Flags().StringVar(&scheme, "scheme", "paillier", "paillier (threshold Paillier) or bgv (the lattice key)")
	return cmd
}

func (a *app) keysStatusCmd() *cobra.Command {
	var config, dir string
	cmd := &cobra.Command{
		Use:   "status [--config node.yaml | --dir DATA_DIR]",
		Short: "Show this node's threshold key: id, size, threshold and how it was made",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if dir == "" {
				cfg, err := node.LoadConfig(config)
				if err != nil {
					return configHint(err, config, false)
				}
				dir = cfg.DataDir
			}
			keys, err := keyring.LoadPaillier(dir)
			if err != nil {
				return fmt.Errorf("no threshold key in %s (run 'cohort keys generate' or 'cohort keys deal'): %w", dir, err)
			}
			pk := keys.Public()
			made, err := keyMade(dir, keyring.PaillierInfoFile, hex.EncodeToString(pk.KeyID[:]))
			if err != nil {
				return err
			}
			out := map[string]any{"key_id": hex.EncodeToString(pk.KeyID[:]), "bits": pk.N.BitLen(), "threshold": pk.Threshold + 1,
				"parties": keys.Members, "index": keys.Share.Index, "made": made}
			lattice, err := latticeStatus(dir)
			if err != nil {
				return err
			}
			if lattice != nil {
				out["lattice"] = lattice
			}
			if a.format == "json" {
				return a.printJSON(out)
			}
			fmt.Fprintf(a.stdout, "key %x\n  %d-bit modulus, any %d of the %d members decrypt (%s)\n  this node holds share %d\n  made: %s\n",
				pk.KeyID, pk.N.BitLen(), pk.Threshold+1, pk.Parties, strings.Join(keys.Members, ", "), keys.Share.Index, made)
			if lattice != nil {
				fmt.Fprintf(a.stdout, "lattice key %s\n  %s, any %d of the %d members decrypt\n  this node holds point %d\n  made: %s\n",
					lattice["key_id"], lattice["params"], lattice["threshold"], len(lattice["parties"].([]string)), lattice["index"], lattice["made"])
			}
			return nil
		},
	}
	a.configFlag(cmd, false, &config, "node.yaml of the node whose key to show")
	cmd.Flags().StringVar(&dir, "dir", "", "the node's data dir (instead of --config)")
	return cmd
}

// keyMade reads how the installed key with the given id was made from its
// info file, or says that there is none.
func keyMade(dir, infoFile, keyID string) (string, error) {
	info, err := keyring.LoadInfo(dir, infoFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "unknown (no " + infoFile + ")", nil
	case err != nil:
		return "", err
	case info.KeyID != keyID:
		return "", fmt.Errorf("%s describes key %s, not the installed key %s", infoFile, info.KeyID, keyID)
	}
	return info.Made, nil
}

// latticeStatus describes the node's lattice key, or returns nil when it
// holds none.
func latticeStatus(dir string) (map[string]any, error) {
	k, err := keyring.LoadLattice(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	id := k.ID()
	made, err := keyMade(dir, keyring.LatticeInfoFile, hex.EncodeToString(id[:]))
	if err != nil {
		return nil, err
	}
	return map[string]any{"key_id": hex.EncodeToString(id[:]), "params": k.Params.Name(), "threshold": k.Quorum,
		"parties": k.Members, "index": k.Self, "made": made}, nil
}

// existingKeys lists the key files of the scheme that dealing into out
// would replace.
func existingKeys(out string, names []string, scheme string) []string {
	var found []string
	for _, name := range names {
		if scheme == "bgv" {
			found = append(found, keyring.ExistingLattice(filepath.Join(out, name))...)
		} else {
			found = append(found, keyring.ExistingPaillier(filepath.Join(out, name))...)
		}
	}
	return found
}
