package job

import "fmt"

// GroupMode is how a party loads a table that a kind can read as weighted
// groups of alike rows (sjc's distinct rows, boost's binned groups): the
// node's setting for that kind (node.yaml sjc_group_rows,
// boost_group_rows). Whatever the mode, what the party sends is the same.
type GroupMode int

const (
	// GroupAuto groups a table when the kind's cheap estimate of its
	// groups (EstimateDistinct) says grouping pays.
	GroupAuto GroupMode = iota
	// GroupOn always groups.
	GroupOn
	// GroupOff never groups: each row is its own, of weight 1.
	GroupOff
)

// ParseGroupMode reads a node setting named setting: "auto" (or empty),
// "true" or "false".
func ParseGroupMode(setting, s string) (GroupMode, error) {
	switch s {
	case "", "auto":
		return GroupAuto, nil
	case "true":
		return GroupOn, nil
	case "false":
		return GroupOff, nil
	}
	return 0, fmt.Errorf("%s must be true, false or auto", setting)
}
