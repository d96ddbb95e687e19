package chaos

import "testing"

func TestOutcomeOf(t *testing.T) {
	for code, want := range map[string]Outcome{
		"40001": Fail, // conflict: not committed
		"57P03": Fail, // no quorum: not submitted
		"23505": Fail,
		"40003": Info, // submitted, outcome unknown
		"":      Info, // no answer at all
	} {
		if got := outcomeOf(code); got != want {
			t.Errorf("outcomeOf(%q) = %v, want %v", code, got, want)
		}
	}
}
