package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/internal/atomicfile"
	"github.com/cohortdm/cohort/profile"
)

// profileCmd is the `profile` group: privacy-enhancing personalised search
// on the user's own machine (Xu, thesis, chapter 5). It is a client command,
// not a job: nothing here talks to a node.
func (a *app) profileCmd() *cobra.Command {
	cmd := groupCmd("profile", "Personalised search that exposes only what the user allows (Xu, chapter 5): build, expose, rerank")
	cmd.Long = `profile builds a hierarchical interest profile from a user's own documents, shows
which part of it a threshold minDetail exposes and how much information that is
(expRatio), and re-ranks a search engine's results with the exposed part only
(PPRank). The profile stays on the user's machine; only the list that expose
prints would go to a search wrapper. docs/profile.md has the algorithm and figures.`
	cmd.AddCommand(a.profileBuildCmd(), a.profileExposeCmd(), a.profileRerankCmd(), a.profileGenCmd())
	return cmd
}

func (a *app) profileBuildCmd() *cobra.Command {
	var p profile.Params
	var out string
	cmd := &cobra.Command{
		Use:   "build DOCS",
		Short: "Build the interest profile of DOCS (one document per line, stemmed terms separated by commas)",
		Long: `build reads DOCS, one document per line with its terms (already stemmed, without
"/") separated by commas, and builds the hierarchical profile with Rules 1 and 2 and
the 1/n support split. It prints the profile as JSON, or writes it to --out (mode
0600, replacing the file whole): {"label": "", "sup": |D|, "children": [...]},
labels merged by Rule 1 joined by "/".`,
		Example: `  printf 'sports,badminton\nsoccer,sports\nresearch,search\nresearch,ai\n' > docs.txt
  cohort profile build docs.txt --minsup 2 --delta 0.6
  cohort profile build docs.txt --minsup 2 --delta 0.6 --out profile.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkParams(p); err != nil {
				return err
			}
			var docs [][]string
			if err := readFile(args[0], func(r io.Reader) (err error) {
				docs, err = profile.ParseDocuments(r)
				return err
			}); err != nil {
				return err
			}
			root, err := profile.Build(docs, p)
			if err != nil {
				return err
			}
			if out == "" {
				return root.WriteJSON(a.stdout)
			}
			var b bytes.Buffer
			if err := root.WriteJSON(&b); err != nil {
				return err
			}
			if err := atomicfile.Write(out, b.Bytes(), 0o600); err != nil {
				return fmt.Errorf("--out: %w", err)
			}
			fmt.Fprintf(a.stdout, "wrote %s: %d top-level interests from %d documents\n", out, len(root.Children), len(docs))
			return nil
		},
	}
	cmd.Flags().IntVar(&p.MinSup, "minsup", 5, "documents a term must appear in to be frequent (the thesis's experiments: 5)")
	cmd.Flags().Float64Var(&p.Delta, "delta", 0.6, "threshold of Rules 1 and 2, in [0, 1]")
	cmd.Flags().StringVar(&out, "out", "", "write the profile to this file instead of stdout")
	return cmd
}

// checkParams names the flag at fault.
func checkParams(p profile.Params) error {
	if p.MinSup < 1 {
		return fmt.Errorf("--minsup must be at least 1")
	}
	if !(p.Delta >= 0 && p.Delta <= 1) {
		return fmt.Errorf("--delta must be in [0, 1]")
	}
	return nil
}

func (a *app) profileExposeCmd() *cobra.Command {
	var minDetail float64
	cmd := &cobra.Command{
		Use:   "expose PROFILE --min-detail X",
		Short: "Print the terms a minDetail exposes, with their weights log(|D|/Sup), and the expRatio",
		Long: `expose hides every interest of PROFILE whose share Sup/|D| of the documents is below
--min-detail, with everything under it, and prints what would leave the machine: the
exposed terms with their weights log10(|D|/Sup). The last line gives expRatio, the
exposed part's entropy over the whole profile's. --format json adds the leaves of the
exposed tree.`,
		Example: `  cohort profile expose profile.json --min-detail 0.3
  cohort profile expose profile.json --min-detail 0.05 --format json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("min-detail") {
				return fmt.Errorf("--min-detail is required: it decides what leaves the machine")
			}
			e, err := exposeFile(args[0], minDetail)
			if err != nil {
				return err
			}
			if a.format == "json" {
				return a.printJSON(e)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "TERM\tWEIGHT")
			for _, w := range e.Terms {
				fmt.Fprintf(tw, "%s\t%.3f\n", w.Term, w.Weight)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			fmt.Fprintf(a.stdout, "expRatio %.3f  exposed %d  H(U[exp]) %.3f  H(U) %.3f\n", e.ExpRatio, len(e.Terms), e.HExp, e.H)
			return nil
		},
	}
	cmd.Flags().Float64Var(&minDetail, "min-detail", 0, "hide interests with Sup/|D| below this, in [0, 1]")
	return cmd
}

// exposeFile reads a profile and exposes it, naming --min-detail on a bad
// threshold.
func exposeFile(path string, minDetail float64) (profile.Exposure, error) {
	if !(minDetail >= 0 && minDetail <= 1) {
		return profile.Exposure{}, fmt.Errorf("--min-detail must be in [0, 1]")
	}
	var root *profile.Node
	if err := readFile(path, func(r io.Reader) (err error) {
		root, err = profile.ReadProfile(r)
		return err
	}); err != nil {
		return profile.Exposure{}, err
	}
	return profile.Expose(root, minDetail)
}

func (a *app) profileRerankCmd() *cobra.Command {
	var alpha, minDetail float64
	cmd := &cobra.Command{
		Use:   "rerank PROFILE RESULTS --alpha A",
		Short: "Re-rank a search engine's results by PPRank with the exposed part of PROFILE",
		Long: `rerank plays the search wrapper: it scores each result of RESULTS (one per line: the
engine's rank, a comma, the page's stemmed terms separated by commas, repeats kept)
by UPScore = sum of w_t times the term's frequency over the terms expose prints at
--min-detail, ranks by it (UPRank) and orders the results by
PPRank = alpha UPRank + (1 - alpha) engine rank. It uses nothing expose would not send.`,
		Example: `  printf '1,weather,news\n2,research,search,search\n3,sports\n' > results.txt
  cohort profile rerank profile.json results.txt --alpha 0.6 --min-detail 0.1`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if !(alpha >= 0 && alpha <= 1) {
				return fmt.Errorf("--alpha must be in [0, 1]")
			}
			e, err := exposeFile(args[0], minDetail)
			if err != nil {
				return err
			}
			var res []profile.Result
			if err := readFile(args[1], func(r io.Reader) (err error) {
				res, err = profile.ParseResults(r)
				return err
			}); err != nil {
				return err
			}
			ranked, err := profile.Rerank(e.Terms, res, alpha)
			if err != nil {
				return err
			}
			if a.format == "json" {
				return a.printJSON(ranked)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "PPRANK\tRANK\tUPRANK\tUPSCORE\tPAGE")
			for _, r := range ranked {
				fmt.Fprintf(tw, "%g\t%d\t%d\t%.3f\t%s\n", r.PPRank, r.Rank, r.UPRank, r.Score, strings.Join(r.Terms, ","))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().Float64Var(&alpha, "alpha", 0.6, "weight of the profile's rank, in [0, 1] (the thesis's best: 0.6)")
	cmd.Flags().Float64Var(&minDetail, "min-detail", 0, "use only the terms expose shows at this threshold, in [0, 1]")
	return cmd
}

func (a *app) profileGenCmd() *cobra.Command {
	p := profile.DefaultGen()
	var out string
	cmd := &cobra.Command{
		Use:   "gen",
		Short: "Generate a seeded corpus of documents with a topic hierarchy, for trying and measuring profiles",
		Long: `gen writes --docs documents in build's format. Each is about one interest of a topic
tree (--topics top-level topics, Zipf-popular; --fanout subtopics each, --depth
levels; going one level deeper with probability 0.6) and names its topic and, with
probability 0.8 each, the topics above it ("t2-1-3" under "t2-1" under "t2"), plus
--noise background words drawn Zipf from --vocab. The same flags give the same corpus.`,
		Example: `  cohort profile gen --seed 1 --out corpus.txt`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			// Generate's errors name the parameter as its flag is named.
			docs, err := profile.Generate(p)
			if err != nil {
				return err
			}
			if out == "" {
				return profile.WriteDocuments(a.stdout, docs)
			}
			var b bytes.Buffer
			if err := profile.WriteDocuments(&b, docs); err != nil {
				return err
			}
			if err := atomicfile.Write(out, b.Bytes(), 0o644); err != nil {
				return fmt.Errorf("--out: %w", err)
			}
			fmt.Fprintf(a.stdout, "wrote %s: %d documents\n", out, len(docs))
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&p.Docs, "docs", p.Docs, "documents (default: the thesis's mean of history entries and mails per user)")
	f.IntVar(&p.Topics, "topics", p.Topics, "top-level topics")
	f.IntVar(&p.Fanout, "fanout", p.Fanout, "subtopics per topic")
	f.IntVar(&p.Depth, "depth", p.Depth, "levels of the topic tree")
	f.IntVar(&p.Noise, "noise", p.Noise, "background words per document")
	f.IntVar(&p.Vocab, "vocab", p.Vocab, "background vocabulary size")
	f.Uint64Var(&p.Seed, "seed", p.Seed, "seed of the corpus")
	f.StringVar(&out, "out", "", "write the corpus to this file instead of stdout")
	return cmd
}

// readFile opens path and reads it with read, naming the file on error.
func readFile(path string, read func(io.Reader) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := read(f); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
