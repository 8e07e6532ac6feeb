//go:build !race

package secureagg

// raceSlowdown scales the few hop timeouts that tests set short (see
// race_test.go).
const raceSlowdown = 1
