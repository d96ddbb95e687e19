package elle

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// randomKey picks one of a few keys, so that transactions contend.
func randomKey(rng *rand.Rand, keys int) string { return fmt.Sprintf("k%d", rng.IntN(keys)) }

// serialHistory runs n random transactions one after another against an
// in-memory store of lists, so the history is serializable by construction.
// Most commit; some fail (their appends are discarded); some are
// indeterminate and took effect or not at random, with unknown reads.
func serialHistory(rng *rand.Rand, n, keys int) []Txn {
	state := map[string][]int{}
	next := 0 // one counter for all keys keeps values unique per key
	h := make([]Txn, 0, n)
	for range n {
		mine := map[string][]int{} // this transaction's view of keys it wrote
		var ops []Op
		for range 1 + rng.IntN(5) {
			k := randomKey(rng, keys)
			cur, wrote := mine[k]
			if !wrote {
				cur = state[k]
			}
			if rng.IntN(2) == 0 {
				next++
				mine[k] = slices.Concat(cur, []int{next})
				ops = append(ops, ap(k, next))
			} else {
				ops = append(ops, rd(k, slices.Clone(cur)...))
			}
		}
		txn := Txn{Process: rng.IntN(5), Ops: ops}
		apply := true
		switch r := rng.IntN(10); {
		case r == 8:
			txn.Outcome, apply = Fail, false
		case r == 9:
			txn.Outcome, apply = Info, rng.IntN(2) == 0
			forgetReads(&txn)
		}
		if apply {
			for k, l := range mine {
				state[k] = l
			}
		}
		h = append(h, txn)
	}
	return h
}

// forgetReads blanks the reads of an indeterminate transaction, whose
// results a client never gets.
func forgetReads(t *Txn) {
	for i := range t.Ops {
		t.Ops[i].Read = nil
	}
}

func TestSerialHistoriesAreValid(t *testing.T) {
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 1))
		h := serialHistory(rng, 60, 1+rng.IntN(5))
		if res := Check(h); !res.Valid() {
			t.Fatalf("seed %d: serial history reported\n%s", seed, res)
		}
	}
}

// TestCorruptedReadIsCaught corrupts one read of a serial history in ways
// that no execution could produce and expects the matching anomaly.
func TestCorruptedReadIsCaught(t *testing.T) {
	type readRef struct{ txn, op int }
	mutations := []struct {
		want string
		// mutate changes one read of h and reports whether it found one to
		// change.
		mutate func(rng *rand.Rand, h []Txn, reads []readRef) bool
	}{
		{DuplicateElements, func(rng *rand.Rand, h []Txn, reads []readRef) bool {
			for _, r := range shuffled(rng, reads) {
				op := &h[r.txn].Ops[r.op]
				if len(op.Read) > 0 {
					op.Read = slices.Insert(slices.Clone(op.Read), rng.IntN(len(op.Read)+1), op.Read[0])
					return true
				}
			}
			return false
		}},
		{GarbageRead, func(rng *rand.Rand, h []Txn, reads []readRef) bool {
			r := reads[rng.IntN(len(reads))]
			op := &h[r.txn].Ops[r.op]
			op.Read = append(slices.Clone(op.Read), -1)
			return true
		}},
		{G1a, func(rng *rand.Rand, h []Txn, reads []readRef) bool {
			for _, r := range shuffled(rng, reads) {
				op := &h[r.txn].Ops[r.op]
				for _, txn := range h {
					for _, a := range txn.Ops {
						if txn.Outcome == Fail && a.Kind == Append && a.Key == op.Key {
							op.Read = append(slices.Clone(op.Read), a.Value)
							return true
						}
					}
				}
			}
			return false
		}},
		// Dropping the first element of a read of two or more leaves a list
		// that starts differently from every other non-empty read of the key.
		{IncompatibleOrder, func(rng *rand.Rand, h []Txn, reads []readRef) bool {
			for _, r := range shuffled(rng, reads) {
				op := &h[r.txn].Ops[r.op]
				if len(op.Read) < 2 {
					continue
				}
				for _, o := range reads {
					other := h[o.txn].Ops[o.op]
					if o != r && other.Key == op.Key && len(other.Read) > 0 {
						op.Read = slices.Clone(op.Read[1:])
						return true
					}
				}
			}
			return false
		}},
	}
	for _, m := range mutations {
		t.Run(m.want, func(t *testing.T) {
			mutated := 0
			for seed := range uint64(200) {
				rng := rand.New(rand.NewPCG(seed, 2))
				h := serialHistory(rng, 40, 3)
				var reads []readRef
				for i, txn := range h {
					for j, op := range txn.Ops {
						if txn.Outcome == OK && op.Kind == Read {
							reads = append(reads, readRef{i, j})
						}
					}
				}
				if len(reads) == 0 || !m.mutate(rng, h, reads) {
					continue
				}
				mutated++
				if res := Check(h); len(res.Anomalies[m.want]) == 0 {
					t.Fatalf("seed %d: corruption not reported as %s; got\n%s", seed, m.want, res)
				}
			}
			if mutated < 100 {
				t.Fatalf("only %d of 200 histories could be corrupted", mutated)
			}
		})
	}
}

func shuffled[T any](rng *rand.Rand, s []T) []T {
	s = slices.Clone(s)
	rng.Shuffle(len(s), func(i, j int) { s[i], s[j] = s[j], s[i] })
	return s
}

// siHistory runs random transactions concurrently under snapshot isolation
// against an in-memory store: each reads the committed state as of its
// start plus its own appends, and its appends are applied at commit. With
// firstCommitterWins, a transaction fails if a key it appended to was
// committed since its snapshot, which is what snapshot isolation requires;
// without it, updates get lost.
func siHistory(rng *rand.Rand, n, keys int, firstCommitterWins bool) []Txn {
	type running struct {
		snap    map[string][]int
		version int // commits included in snap
		writes  map[string][]int
		ops     []Op
		left    int
	}
	state := map[string][]int{}
	lastCommit := map[string]int{} // key -> version that last appended to it
	version, next := 0, 0
	var active []*running
	h := make([]Txn, 0, n)
	for len(h) < n {
		if len(active) == 0 || len(active) < 4 && rng.IntN(3) == 0 {
			snap := make(map[string][]int, len(state))
			for k, l := range state {
				snap[k] = l // never appended to in place: safe to share
			}
			active = append(active, &running{snap: snap, version: version, writes: map[string][]int{}, left: 1 + rng.IntN(4)})
			continue
		}
		i := rng.IntN(len(active))
		t := active[i]
		if t.left > 0 {
			t.left--
			k := randomKey(rng, keys)
			if rng.IntN(2) == 0 {
				next++
				t.writes[k] = append(t.writes[k], next)
				t.ops = append(t.ops, ap(k, next))
			} else {
				t.ops = append(t.ops, rd(k, slices.Concat(t.snap[k], t.writes[k])...))
			}
			continue
		}
		active = slices.Delete(active, i, i+1)
		txn := Txn{Process: i, Ops: t.ops, Outcome: OK}
		apply := true
		for k := range t.writes {
			if firstCommitterWins && lastCommit[k] > t.version {
				txn.Outcome, apply = Fail, false
			}
		}
		if apply && rng.IntN(10) == 0 {
			txn.Outcome, apply = Info, rng.IntN(2) == 0
			forgetReads(&txn)
		}
		if apply {
			version++
			for k, w := range t.writes {
				state[k] = slices.Concat(state[k], w)
				lastCommit[k] = version
			}
		}
		h = append(h, txn)
	}
	return h
}

// TestSnapshotIsolationHistoriesAreValidForSI checks that snapshot isolation
// with first-committer-wins never shows an anomaly it forbids, and that the
// write skew it allows is found and reported as G2-item only.
func TestSnapshotIsolationHistoriesAreValidForSI(t *testing.T) {
	g2 := 0
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 3))
		res := Check(siHistory(rng, 50, 2+rng.IntN(3), true))
		if !res.Valid(G2Item) {
			t.Fatalf("seed %d: snapshot isolation history reported\n%s", seed, res)
		}
		g2 += len(res.Anomalies[G2Item])
	}
	if g2 == 0 {
		t.Fatal("no write skew in 300 snapshot isolation histories: the test shows nothing")
	}
}

// TestLostUpdatesAreCaught drops first-committer-wins: concurrent appends to
// one key both commit, and the history must show G-single. The appends still
// apply atomically in commit order, so no G0 or G1 can appear; a transaction
// that read its own appends on a key someone else appended to meanwhile
// observed a list that never existed, which is an incompatible order.
func TestLostUpdatesAreCaught(t *testing.T) {
	gSingle := 0
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 4))
		res := Check(siHistory(rng, 50, 2+rng.IntN(3), false))
		if !res.Valid(GSingle, G2Item, IncompatibleOrder) {
			t.Fatalf("seed %d: unexpected anomaly\n%s", seed, res)
		}
		gSingle += len(res.Anomalies[GSingle])
	}
	if gSingle < 30 {
		t.Fatalf("only %d G-single in 300 histories without first-committer-wins", gSingle)
	}
}
