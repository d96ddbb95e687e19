package replica

import (
	"testing"
	"time"
)

// TestCutOffWarnings follows a node that loses its leader, is warned about
// with back-off, finds a leader again and loses it once more.
func TestCutOffWarnings(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	c := newCutOff(t0) // starts without a leader
	steps := []struct {
		at                time.Duration
		leader            bool
		warn, reconnected bool
		since             time.Duration // -1: not cut off
	}{
		{1 * time.Second, true, false, false, 0}, // elected quickly: no warning
		{2 * time.Second, true, false, false, -1},
		{3 * time.Second, false, false, false, 3 * time.Second},
		{7 * time.Second, false, false, false, 3 * time.Second},
		{8 * time.Second, false, true, false, 3 * time.Second}, // 5s cut off
		{9 * time.Second, false, false, false, 3 * time.Second},
		{17 * time.Second, false, false, false, 3 * time.Second},
		{18 * time.Second, false, true, false, 3 * time.Second}, // 10s later
		{37 * time.Second, false, false, false, 3 * time.Second},
		{38 * time.Second, false, true, false, 3 * time.Second}, // 20s later
		{40 * time.Second, true, false, true, 3 * time.Second},
		{41 * time.Second, false, false, false, 41 * time.Second}, // back-off starts over
		{46 * time.Second, false, true, false, 41 * time.Second},
	}
	for _, s := range steps {
		warn, reconnected, since := c.observe(at(s.at), s.leader)
		if warn != s.warn || reconnected != s.reconnected {
			t.Fatalf("at %s (leader %v): warn %v reconnected %v, want %v %v", s.at, s.leader, warn, reconnected, s.warn, s.reconnected)
		}
		if s.since >= 0 && !since.Equal(at(s.since)) {
			t.Fatalf("at %s: since %s, want %s", s.at, since, at(s.since))
		}
		if s.since < 0 && !since.IsZero() {
			t.Fatalf("at %s: since %s, want none", s.at, since)
		}
	}
	// The interval stops growing at cutOffWarnMax.
	c = newCutOff(t0)
	now, warnings := t0, 0
	var last time.Time
	for now.Before(t0.Add(time.Hour)) {
		now = now.Add(time.Second)
		if warn, _, _ := c.observe(now, false); warn {
			if !last.IsZero() && now.Sub(last) > cutOffWarnMax {
				t.Fatalf("warnings %s apart", now.Sub(last))
			}
			last = now
			warnings++
		}
	}
	if warnings < 10 || warnings > 20 {
		t.Errorf("%d warnings in an hour cut off", warnings)
	}
}
