package anonymize_test

import (
	"fmt"
	"strings"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/table"
)

// An ARX hierarchy, a table generalised with it, and the k-anonymity check.
func Example() {
	tx, err := anonymize.ReadARX(strings.NewReader("Civil;Engineering;*\nMechanical;Engineering;*\nArts;Humanities;*\n"), "education", false)
	if err != nil {
		fmt.Println(err)
		return
	}
	raw := []string{"Civil", "Mechanical", "Civil", "Arts", "Arts"}
	col := &table.Column{Name: "education", Kind: table.Categorical}
	for _, v := range raw {
		g, _ := tx.Generalise(v, 1)
		col.Str = append(col.Str, g)
	}
	t := &table.Table{Name: "published", Columns: []*table.Column{col}}
	fmt.Println(col.Str)
	fmt.Println(anonymize.CheckK(t, []anonymize.Requirement{{QID: []string{"education"}, K: 2}}))
	fmt.Println(anonymize.CheckK(t, []anonymize.Requirement{{QID: []string{"education"}, K: 3}}))
	_, err = tx.Generalise("Law", 1)
	fmt.Println(err)
	// Output:
	// [Engineering Engineering Engineering Humanities Humanities]
	// <nil>
	// anonymize: privacy model violated: <{education}, 3>: group (education=Humanities) has 2 records
	// anonymize: value not in taxonomy: column "education": value "Law"
}
