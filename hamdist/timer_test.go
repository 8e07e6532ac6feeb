package hamdist

import "time"

// timer measures consecutive laps of a benchmark iteration.
type timer struct{ last time.Time }

func startTimer() *timer { return &timer{last: time.Now()} }

// lap returns the seconds since the last lap (or the start).
func (t *timer) lap() float64 {
	now := time.Now()
	d := now.Sub(t.last).Seconds()
	t.last = now
	return d
}
