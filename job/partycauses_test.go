package job

import "testing"

// A cause that starts by naming its own party, after a colon or as the
// subject of its sentence, is not prefixed with the party again ("party
// north: party north refuses ..."); one that names another party, or a
// name that merely starts like its own, is.
func TestPartyCausesNamesEachPartyOnce(t *testing.T) {
	why := map[string]string{
		"north":  "party north refuses finish round 0: coordinator west asks for another attempt",
		"south":  "party south: table T: column v is not numeric",
		"east":   "did not answer in time",
		"west":   "party westerly refuses nothing: another party's name",
		"centre": "party north refuses finish round 0",
	}
	got := PartyCauses(why)
	want := "party centre: party north refuses finish round 0; " +
		"party east: did not answer in time; " +
		"party north refuses finish round 0: coordinator west asks for another attempt; " +
		"party south: table T: column v is not numeric; " +
		"party west: party westerly refuses nothing: another party's name"
	if got != want {
		t.Errorf("PartyCauses:\n got %s\nwant %s", got, want)
	}
}
