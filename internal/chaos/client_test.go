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
