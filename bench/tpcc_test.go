package bench

import (
	"math"
	"math/rand/v2"
	"testing"
)

// The standard mix and the seeds' read/write splits come out in their
// proportions.
func TestTPCCMixes(t *testing.T) {
	const n = 200000
	for mix, want := range map[string]map[string]float64{
		"standard": {"new-order": 45, "payment": 43, "delivery": 4, "order-status": 4, "stock-level": 4},
		"80/20":    {"new-order": 20 * 45 / 92.0, "payment": 20 * 43 / 92.0, "delivery": 20 * 4 / 92.0, "order-status": 40, "stock-level": 40},
		"100/0":    {"order-status": 50, "stock-level": 50},
	} {
		w := TPCC{Mix: mix, Scale: 0.01}
		rng := rand.New(rand.NewPCG(1, 2))
		got := map[string]float64{}
		for range n {
			got[w.Next(rng, 0).Kind]++
		}
		for kind, pct := range want {
			if share := 100 * got[kind] / n; math.Abs(share-pct) > 0.5 {
				t.Errorf("%s: %s is %.2f%%, want %.2f%%", mix, kind, share, pct)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: kinds %v, want %v", mix, got, want)
		}
	}
}

func TestNURandStaysInRange(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		if v := nuRand(rng, 1023, 1, 3000, cCustomer); v < 1 || v > 3000 {
			t.Fatalf("NURand(1023, 1, 3000) = %d", v)
		}
	}
}

func TestLastNameIsTPCCs(t *testing.T) {
	// TPC-C 4.3.2.3's example: 371 is PRICALLYOUGHT.
	if got := lastName(371); got != "PRICALLYOUGHT" {
		t.Fatalf("lastName(371) = %s", got)
	}
}
