//go:build race

package secureagg

// raceSlowdown scales the few hop timeouts that tests set short: the race
// detector makes every party several times slower on two cores.
const raceSlowdown = 4
