package chaos

import (
	"math"
	"testing"

	"github.com/anishathalye/porcupine"
)

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

// The register model accepts a linearizable history and refuses a stale
// read.
func TestRegisterModel(t *testing.T) {
	w := func(v int64, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: registerInput{key: 1, write: true, value: v}, Call: call, Output: int64(0), Return: ret}
	}
	r := func(v int64, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: registerInput{key: 1}, Call: call, Output: v, Return: ret}
	}
	ok := []porcupine.Operation{w(1, 0, 10), r(0, 5, 6), r(1, 11, 12), w(2, 20, math.MaxInt64), r(2, 30, 31)}
	if !porcupine.CheckOperations(registerModel, ok) {
		t.Fatal("linearizable history refused")
	}
	stale := []porcupine.Operation{w(1, 0, 10), r(0, 11, 12)}
	if porcupine.CheckOperations(registerModel, stale) {
		t.Fatal("a read of the old value after the write completed was accepted")
	}
}

// Indeterminate writes are bounded without changing the verdict: one never
// read is dropped, one read is closed at the first read of its value, and a
// read of a value before its write was called is still refused.
func TestBoundIndeterminateKeepsTheVerdict(t *testing.T) {
	w := func(v int64, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: registerInput{key: 1, write: true, value: v}, Call: call, Output: int64(0), Return: ret}
	}
	r := func(v int64, call, ret int64) porcupine.Operation {
		return porcupine.Operation{Input: registerInput{key: 1}, Call: call, Output: v, Return: ret}
	}
	open := int64(math.MaxInt64)
	for _, tc := range []struct {
		name         string
		ops          []porcupine.Operation
		linearizable bool
		kept         int
	}{
		{"unread write dropped", []porcupine.Operation{w(1, 0, open), w(2, 5, 6), r(2, 7, 8)}, true, 2},
		{"read write closed", []porcupine.Operation{w(1, 0, open), r(0, 1, 2), r(1, 10, 11), r(1, 20, 21)}, true, 4},
		{"read before its write", []porcupine.Operation{r(1, 0, 1), w(1, 5, open)}, false, 2},
		{"read after it was overwritten", []porcupine.Operation{w(1, 0, open), r(1, 5, 6), w(2, 10, 11), r(2, 12, 13), r(1, 14, 15)}, false, 5},
	} {
		bounded := boundIndeterminate(tc.ops)
		if len(bounded) != tc.kept {
			t.Errorf("%s: kept %d operations, want %d", tc.name, len(bounded), tc.kept)
		}
		for _, op := range bounded {
			if op.Return == open {
				t.Errorf("%s: an operation is still open", tc.name)
			}
		}
		if got := porcupine.CheckOperations(registerModel, tc.ops); got != tc.linearizable {
			t.Errorf("%s: the raw history is linearizable=%v, want %v", tc.name, got, tc.linearizable)
		}
		if got := porcupine.CheckOperations(registerModel, bounded); got != tc.linearizable {
			t.Errorf("%s: the bounded history is linearizable=%v, want %v", tc.name, got, tc.linearizable)
		}
	}
}
