package certify

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"certa/writeset"
)

// benchWriteSets returns n write sets of k keys each over a large key space
// (8 tables of 2^24 rows), so that few of them conflict.
func benchWriteSets(n, k int) []writeset.WriteSet {
	rng := rand.New(rand.NewPCG(1, 1))
	tables := []string{"t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"}
	out := make([]writeset.WriteSet, n)
	for i := range out {
		ws := &out[i]
		for range k {
			t := tables[rng.IntN(len(tables))]
			ws.Keys = append(ws.Keys, writeset.EncodeKey(t, rng.Int64N(1<<24)))
			ws.Tables = append(ws.Tables, t)
		}
		ws.Normalize()
	}
	return out
}

// BenchmarkCertify measures Certify plus Commit of one write set of 4 keys in
// the steady state: a full window of 2^16 positions, so every commit also
// prunes one position's keys.
func BenchmarkCertify(b *testing.B) {
	const h = 1 << 16
	wss := benchWriteSets(1<<16, 4)
	c := New(h)
	seqno := uint64(0)
	run := func(i int) {
		seqno++
		ws := &wss[i%len(wss)]
		ws.Snapshot = seqno - 1 - uint64(i%8)%seqno
		if c.Certify(ws, seqno).OK() {
			c.Commit(ws, seqno)
		}
	}
	for i := range 2 * h { // fill the window
		run(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		run(i)
	}
	b.ReportMetric(float64(c.Len()), "keys")
}

// BenchmarkSave measures saving a full window (2^16 positions of 4 keys).
func BenchmarkSave(b *testing.B) {
	const h = 1 << 16
	wss := benchWriteSets(h, 4)
	c := New(h)
	for i := range wss {
		n := uint64(i + 1)
		wss[i].Snapshot = n - 1
		c.Certify(&wss[i], n)
		c.Commit(&wss[i], n)
	}
	var buf bytes.Buffer
	c.Save(&buf)
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		buf.Reset()
		if err := c.Save(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(buf.Len())/float64(c.Len()), "bytes/key")
}
