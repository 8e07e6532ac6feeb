package console

import (
	"fmt"
	"strconv"
	"time"
)

// The templates' formatting functions.

// humanBytes writes a byte count in binary units: 512 B, 1.5 KiB, 20 MiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	if v < 10 {
		return fmt.Sprintf("%.1f %ciB", v, "KMGTPE"[exp])
	}
	return fmt.Sprintf("%.0f %ciB", v, "KMGTPE"[exp])
}

// when writes a time in UTC to the second; the zero time is a dash.
func when(t time.Time) string {
	if t.IsZero() {
		return "–"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

// ago writes how long ago t was, coarsely.
func ago(t time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return duration(time.Since(t)) + " ago"
}

// duration writes a duration coarsely: 850 ms, 12.3 s, 4 min 10 s, 3 h 5 min, 2 d 4 h.
func duration(d time.Duration) string {
	switch {
	case d < 0:
		return "–"
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%d h %d min", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%d d %d h", int(d.Hours())/24, int(d.Hours())%24)
}

// short cuts a long identifier (a peer id, a key id) to its first 12
// characters and an ellipsis.
func short(s string) string {
	if len(s) <= 14 {
		return s
	}
	return s[:12] + "…"
}

// thousands writes an integer with commas between groups of three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ","...)
		}
		out = append(out, s[i])
	}
	if neg {
		return "-" + string(out)
	}
	return string(out)
}
