package publish

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"

	"github.com/cohortdm/cohort/coherence"
	"github.com/cohortdm/cohort/job"
)

// output is the party's publication and figures, sent to the coordinator.
type output struct {
	Published    publication `msgpack:"published"`
	Format       string      `msgpack:"format"`
	Algorithm    string      `msgpack:"algorithm"`
	Suppressed   []string    `msgpack:"suppressed"`
	Size1        int         `msgpack:"size1"`
	Transactions int         `msgpack:"transactions"`
	Occurrences  int         `msgpack:"occurrences"`
	LossItems    float64     `msgpack:"loss_items"`
	MolesBefore  int         `msgpack:"moles_before"`
	// MolesAfter is 0 but for the k-Anonymizer, which leaves the
	// breaches of h; Classes is its number of equivalence classes.
	MolesAfter int `msgpack:"moles_after"`
	Classes    int `msgpack:"classes"`
	// Nuggets before and after, in decimal (they may pass 2^64); empty
	// without k_nugget.
	NuggetsBefore string  `msgpack:"nuggets_before"`
	NuggetsAfter  string  `msgpack:"nuggets_after"`
	LossNuggets   float64 `msgpack:"loss_nuggets"`
	Seconds       float64 `msgpack:"seconds"`
}

// publication is a published database: the labels of the items it holds,
// and each transaction as indexes into them.
type publication struct {
	Format string     `msgpack:"format" json:"format"`
	Items  []string   `msgpack:"items" json:"items"`
	Trans  [][]uint32 `msgpack:"trans" json:"trans"`
}

// compact keeps only the items that occur.
func compact(db *coherence.Database) publication {
	at := make([]int, len(db.Items))
	var p publication
	for i := range at {
		at[i] = -1
	}
	p.Trans = make([][]uint32, len(db.Trans))
	for t, tr := range db.Trans {
		row := make([]uint32, len(tr))
		for i, it := range tr {
			if at[it] < 0 {
				at[it] = len(p.Items)
				p.Items = append(p.Items, db.Items[it])
			}
			row[i] = uint32(at[it])
		}
		p.Trans[t] = row
	}
	return p
}

var errShape = errors.New("coherence: malformed publication")

// database checks the publication and returns it as a database, with its
// format.
func (p *publication) database() (*coherence.Database, coherence.Format, error) {
	var f coherence.Format
	switch p.Format {
	case "fimi":
		f = coherence.FIMI
	case "csv":
		f = coherence.CSV
	default:
		return nil, 0, fmt.Errorf("%w: format %q", errShape, p.Format)
	}
	seen := make(map[string]bool, len(p.Items))
	for _, l := range p.Items {
		if l == "" || seen[l] {
			return nil, 0, fmt.Errorf("%w: an empty or repeated item label", errShape)
		}
		seen[l] = true
	}
	db := &coherence.Database{Items: p.Items, Trans: make([][]int32, len(p.Trans))}
	mark := make([]int, len(p.Items))
	for t, tr := range p.Trans {
		row := make([]int32, len(tr))
		for i, x := range tr {
			if int(x) >= len(p.Items) || mark[x] == t+1 {
				return nil, 0, fmt.Errorf("%w: transaction %d holds an unknown or repeated item", errShape, t+1)
			}
			mark[x] = t + 1
			row[i] = int32(x)
		}
		db.Trans[t] = row
	}
	return db, f, nil
}

// check checks the output's shape on the coordinator.
func (o *output) check() error {
	db, _, err := o.Published.database()
	if err != nil {
		return err
	}
	if len(db.Trans) != o.Transactions || o.Published.Format != o.Format {
		return fmt.Errorf("%w: the figures do not describe the publication", errShape)
	}
	published := map[string]bool{}
	for _, l := range db.Items {
		published[l] = true
	}
	for _, l := range o.Suppressed {
		if published[l] {
			return fmt.Errorf("%w: a suppressed item is published", errShape)
		}
	}
	switch {
	case o.MolesAfter < 0 || o.Classes < 0:
		return fmt.Errorf("%w: a negative count", errShape)
	case o.Algorithm != "k-anonymizer" && (o.MolesAfter != 0 || o.Classes != 0):
		return fmt.Errorf("%w: moles left by an algorithm that leaves none", errShape)
	}
	for _, n := range []string{o.NuggetsBefore, o.NuggetsAfter} {
		if _, ok := new(big.Int).SetString(n, 10); n != "" && !ok {
			return fmt.Errorf("%w: a nugget count is not a number", errShape)
		}
	}
	return nil
}

// result is the job's result.
func (o *output) result(prm *Params) job.Result {
	res := job.Result{
		"algorithm": o.Algorithm, "utility": prm.Utility, "transactions": o.Transactions, "occurrences": o.Occurrences,
		"suppressed": o.Suppressed, "size1_moles": o.Size1, "loss_items": o.LossItems,
		"moles_before": o.MolesBefore, "moles_after": o.MolesAfter, "seconds": o.Seconds, "verified": true,
		"published": o.Published, "guarantee": "(h,k,p)-coherence",
	}
	if o.Algorithm == "k-anonymizer" {
		res["guarantee"], res["classes"] = "k-anonymity", o.Classes
	}
	if res["suppressed"] == nil {
		res["suppressed"] = []string{}
	}
	if o.NuggetsBefore != "" {
		res["nuggets_before"], res["nuggets_after"] = json.Number(o.NuggetsBefore), json.Number(o.NuggetsAfter)
		res["loss_nuggets"] = o.LossNuggets
	}
	return res
}
