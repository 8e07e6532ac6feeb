package profile

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// GenParams shape a generated corpus: Docs documents, each about one
// interest of a topic tree with Topics top-level topics, Fanout subtopics
// per topic and Depth levels, plus Noise background words from a
// vocabulary of Vocab. Seed fixes the corpus.
type GenParams struct {
	Docs, Topics, Fanout, Depth, Noise, Vocab int
	Seed                                      uint64
}

// DefaultGen is the corpus of docs/profile.md: 1,665 documents, the mean
// number of browsing-history entries and mails per participant in Xu's
// experiments (thesis, chapter 5, Table 2).
func DefaultGen() GenParams {
	return GenParams{Docs: 1665, Topics: 8, Fanout: 4, Depth: 3, Noise: 2, Vocab: 50000, Seed: 1}
}

const (
	// genDeeper is the chance that a document goes one level further down.
	genDeeper = 0.6
	// genEmit is the chance that a document names a topic above its own.
	genEmit = 0.8
	// maxGen bounds every count of GenParams and maxTerms the terms of a
	// corpus, so a flag cannot exhaust memory.
	maxGen   = 1 << 20
	maxTerms = 1 << 26
)

// Generate draws a corpus. A document picks a top-level topic i with
// probability ∝ 1/i (Zipf), then goes down one level with probability
// genDeeper at a time, picking subtopic j with probability ∝ 1/j; it holds
// its deepest topic's term ("t2-1-3"), each topic above it with probability
// genEmit, and Noise words drawn with probability ∝ 1/rank from the
// vocabulary ("w17"). General interests are thus frequent, specific ones
// rare, and a few background words are as frequent as topics, like the
// sites the thesis's participants visited most.
func Generate(p GenParams) ([][]string, error) {
	for _, v := range []struct {
		name string
		n    int
		min  int
	}{{"docs", p.Docs, 1}, {"topics", p.Topics, 1}, {"fanout", p.Fanout, 1}, {"depth", p.Depth, 1}, {"noise", p.Noise, 0}, {"vocab", p.Vocab, 1}} {
		if v.n < v.min || v.n > maxGen {
			return nil, fmt.Errorf("%w: %s must be from %d to %d", ErrParams, v.name, v.min, maxGen)
		}
	}
	if p.Docs*(p.Depth+p.Noise) > maxTerms {
		return nil, fmt.Errorf("%w: docs × (depth + noise) must be at most %d", ErrParams, maxTerms)
	}
	rng := rand.New(rand.NewPCG(p.Seed, 0x70726f66696c65)) // "profile"
	topics, sub, words := zipf(p.Topics), zipf(p.Fanout), zipf(p.Vocab)
	docs := make([][]string, p.Docs)
	for i := range docs {
		path := []int{draw(rng, topics)}
		for len(path) < p.Depth && rng.Float64() < genDeeper {
			path = append(path, draw(rng, sub))
		}
		var doc []string
		for l := range path {
			if l == len(path)-1 || rng.Float64() < genEmit {
				doc = append(doc, topicTerm(path[:l+1]))
			}
		}
		for range p.Noise {
			doc = append(doc, "w"+strconv.Itoa(draw(rng, words)))
		}
		docs[i] = dedup(doc)
	}
	return docs, nil
}

// zipf is the cumulative distribution ∝ 1/i over i = 1..n.
func zipf(n int) []float64 {
	c := make([]float64, n)
	sum := 0.0
	for i := range c {
		sum += 1 / float64(i+1)
		c[i] = sum
	}
	for i := range c {
		c[i] /= sum
	}
	return c
}

// draw picks a 1-based index from a cumulative distribution.
func draw(rng *rand.Rand, cum []float64) int {
	u := rng.Float64()
	i := sort.SearchFloat64s(cum, u)
	if i >= len(cum) {
		i = len(cum) - 1
	}
	return i + 1
}

func topicTerm(path []int) string {
	parts := make([]string, len(path))
	for i, v := range path {
		parts[i] = strconv.Itoa(v)
	}
	return "t" + strings.Join(parts, "-")
}

// WriteDocuments writes one document per line, terms separated by commas,
// as ParseDocuments reads them.
func WriteDocuments(w io.Writer, docs [][]string) error {
	bw := bufio.NewWriter(w)
	for _, d := range docs {
		bw.WriteString(strings.Join(d, ","))
		bw.WriteByte('\n')
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("profile: write documents: %w", err)
	}
	return nil
}
