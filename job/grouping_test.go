package job

import (
	"strings"
	"testing"
)

func TestParseGroupMode(t *testing.T) {
	for in, want := range map[string]GroupMode{"": GroupAuto, "auto": GroupAuto, "true": GroupOn, "false": GroupOff} {
		if got, err := ParseGroupMode("x_group_rows", in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	_, err := ParseGroupMode("x_group_rows", "secret-value")
	if err == nil || !strings.Contains(err.Error(), "x_group_rows") || strings.Contains(err.Error(), "secret-value") {
		t.Fatalf("error %v: want the setting named and not the value", err)
	}
}
