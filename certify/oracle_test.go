package certify

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"certa/writeset"
)

// naive is the certification rule written as plainly as possible: it keeps
// every committed write set forever and scans them all.
type naive struct {
	h       uint64
	last    uint64
	commits []naiveCommit // in commit (= position) order
}

type naiveCommit struct {
	seqno uint64
	ws    writeset.WriteSet
}

func (n *naive) certify(ws *writeset.WriteSet, seqno uint64) Result {
	n.last = seqno
	if ws.IsDDL() {
		return Result{}
	}
	s := ws.Snapshot
	if s >= seqno {
		return Result{Reason: Invalid}
	}
	if seqno-s > n.h {
		return Result{Reason: TooOld}
	}
	between := func(p uint64) bool { return s < p && p < seqno }

	// SchemaChanged: the smallest of the write set's tables touched by a DDL
	// in (s, seqno), with the last such DDL.
	var res *Result
	changesSchema := func(c naiveCommit) bool { return c.ws.IsDDL() || c.ws.Schema != writeset.SchemaNone }
	global := func(c naiveCommit) bool {
		return changesSchema(c) && (len(c.ws.Tables) == 0 || c.ws.Schema == writeset.SchemaAll)
	}
	for _, t := range ws.Tables {
		for _, c := range n.commits {
			if changesSchema(c) && between(c.seqno) && (global(c) || slices.Contains(c.ws.Tables, t)) {
				if res == nil || t < res.Table || (t == res.Table && c.seqno > res.ConflictSeqno) {
					res = &Result{Reason: SchemaChanged, Table: t, ConflictSeqno: c.seqno}
				}
			}
		}
	}
	if res == nil {
		for _, c := range n.commits {
			if global(c) && between(c.seqno) {
				res = &Result{Reason: SchemaChanged, ConflictSeqno: c.seqno}
			}
		}
	}
	if res == nil && ws.Schema == writeset.SchemaAll {
		// Its own schema statements may touch any table.
		for _, c := range n.commits {
			if changesSchema(c) && between(c.seqno) {
				res = &Result{Reason: SchemaChanged, ConflictSeqno: c.seqno}
			}
		}
	}
	if res != nil {
		return *res
	}

	// Conflict: the smallest key written in (s, seqno), or of ws.Keys
	// shared there, with its last such commit.
	var best writeset.Key
	conflict := func(k writeset.Key, hit func(c naiveCommit) bool) {
		for _, c := range n.commits {
			if between(c.seqno) && hit(c) {
				if res == nil || k < best || (k == best && c.seqno > res.ConflictSeqno) {
					best = k
					res = &Result{Reason: Conflict, Table: k.Table(), ConflictSeqno: c.seqno}
				}
			}
		}
	}
	for _, k := range ws.Keys {
		conflict(k, func(c naiveCommit) bool { return slices.Contains(c.ws.Keys, k) || slices.Contains(c.ws.SharedKeys, k) })
	}
	for _, k := range ws.SharedKeys {
		conflict(k, func(c naiveCommit) bool { return slices.Contains(c.ws.Keys, k) })
	}
	if res != nil {
		return *res
	}

	// ReadChanged: the smallest table read whose key was committed, or
	// which a DDL named, in (s, seqno), with its last such commit.
	reads := slices.Sorted(slices.Values(ws.ReadTables))
	for _, t := range reads {
		for _, c := range n.commits {
			wrote := slices.ContainsFunc(c.ws.Keys, func(k writeset.Key) bool { return k.Table() == t })
			named := changesSchema(c) && !global(c) && slices.Contains(c.ws.Tables, t)
			if between(c.seqno) && (wrote || named) {
				res = &Result{Reason: ReadChanged, Table: t, ConflictSeqno: c.seqno}
			}
		}
		if res != nil {
			return *res
		}
	}
	// Then the smallest key read that was written there, with its last
	// write.
	for _, k := range slices.Sorted(slices.Values(ws.ReadKeys)) {
		for _, c := range n.commits {
			if between(c.seqno) && slices.Contains(c.ws.Keys, k) {
				res = &Result{Reason: ReadChanged, Table: k.Table(), Key: k, ConflictSeqno: c.seqno}
			}
		}
		if res != nil {
			return *res
		}
	}
	// Then the smallest table of a key or range read that a DDL named
	// there, with the last such DDL; for a filter, the last DDL there.
	var fine []string
	for _, k := range ws.ReadKeys {
		fine = append(fine, k.Table())
	}
	for _, r := range ws.ReadRanges {
		fine = append(fine, writeset.BaseTable(r.Table()))
	}
	for _, t := range slices.Sorted(slices.Values(fine)) {
		for _, c := range n.commits {
			if between(c.seqno) && changesSchema(c) && !global(c) && slices.Contains(c.ws.Tables, t) {
				res = &Result{Reason: ReadChanged, Table: t, ConflictSeqno: c.seqno}
			}
		}
		if res != nil {
			return *res
		}
	}
	if ws.ReadFilter != nil {
		for _, c := range n.commits {
			if between(c.seqno) && changesSchema(c) {
				res = &Result{Reason: ReadChanged, ConflictSeqno: c.seqno}
			}
		}
		if res != nil {
			return *res
		}
	}
	// Then every key written there that a range holds (the smallest) or,
	// failing that, the filter may hold (the smallest), with its last
	// write.
	var inRange, inFilter []writeset.Key
	last := map[writeset.Key]uint64{}
	for _, c := range n.commits {
		if !between(c.seqno) {
			continue
		}
		for _, k := range append(slices.Clone(c.ws.Keys), c.ws.IndexKeys...) {
			last[k] = c.seqno
			if slices.ContainsFunc(ws.ReadRanges, func(r writeset.KeyRange) bool { return naiveContains(r, k) }) {
				inRange = append(inRange, k)
			} else if ws.ReadFilter != nil && ws.ReadFilter.MayContain(k) {
				inFilter = append(inFilter, k)
			}
		}
	}
	if len(inRange) > 0 {
		k := slices.Min(inRange)
		return Result{Reason: ReadChanged, Table: k.Table(), Key: k, ConflictSeqno: last[k]}
	}
	if len(inFilter) > 0 {
		k := slices.Min(inFilter)
		return Result{Reason: ReadChanged, Table: k.Table(), Key: k, ViaFilter: true, ConflictSeqno: last[k]}
	}
	return Result{}
}

func (n *naive) commit(ws *writeset.WriteSet, seqno uint64) {
	n.commits = append(n.commits, naiveCommit{seqno, cloneWS(ws)})
}

// tracked is the number of distinct keys whose last commit is within the
// window, which is what the certifier must hold: no more, no less.
func (n *naive) tracked() int {
	last, shared := map[writeset.Key]uint64{}, map[writeset.Key]uint64{}
	for _, c := range n.commits {
		for _, k := range c.ws.Keys {
			last[k] = c.seqno
		}
		for _, k := range c.ws.SharedKeys {
			shared[k] = c.seqno
		}
	}
	count := 0
	for _, m := range []map[writeset.Key]uint64{last, shared} {
		for _, p := range m {
			if n.last < n.h || p > n.last-n.h {
				count++
			}
		}
	}
	return count
}

func cloneWS(ws *writeset.WriteSet) writeset.WriteSet {
	c := *ws
	c.Keys = slices.Clone(ws.Keys)
	c.Tables = slices.Clone(ws.Tables)
	c.ReadTables = slices.Clone(ws.ReadTables)
	c.SharedKeys = slices.Clone(ws.SharedKeys)
	c.ReadKeys = slices.Clone(ws.ReadKeys)
	c.ReadRanges = slices.Clone(ws.ReadRanges)
	c.IndexKeys = slices.Clone(ws.IndexKeys)
	return c
}

// naiveContains is KeyRange.Contains by another road: a prefix range
// holds k if k starts with its lead and then one of the text values the
// histories use that has the prefix.
func naiveContains(r writeset.KeyRange, k writeset.Key) bool {
	if r.Prefix == "" {
		return r.Contains(k)
	}
	for _, s := range oracleTexts {
		value := string(writeset.EncodeKey("", s)[1:])
		if strings.HasPrefix(s, r.Prefix) && strings.HasPrefix(string(k), string(r.Lo)+value) {
			return true
		}
	}
	return false
}

// oracleTexts are the text values of keys, and oraclePrefixes the text
// prefixes ranges select by.
var (
	oracleTexts    = []string{"0", "1", "2", "x", "a", "ab", "abc", "b", "xa"}
	oraclePrefixes = []string{"a", "ab", "x", "1", "abcd"}
)

// history generates random write sets over a few hot keys of a few tables.
type history struct {
	rng *rand.Rand
	h   uint64
}

var oracleTables = []string{"a", "b", "c", "d"}

func (g *history) key() writeset.Key {
	t := oracleTables[g.rng.IntN(len(oracleTables))]
	switch g.rng.IntN(10) {
	case 0:
		return writeset.EncodeKey(t, oracleTexts[g.rng.IntN(len(oracleTexts))])
	case 1:
		return writeset.EncodeKey(t, int64(g.rng.IntN(2)), oracleTexts[g.rng.IntN(len(oracleTexts))])
	case 2:
		return writeset.EncodeKey(t, g.rng.Int64()) // cold
	}
	return writeset.EncodeKey(t, int64(g.rng.IntN(4)))
}

func (g *history) writeSet(seqno uint64) writeset.WriteSet {
	ws := writeset.WriteSet{Origin: fmt.Sprint("n", g.rng.IntN(3)), TxID: g.rng.Uint64()}
	// Snapshots mostly recent, some beyond the horizon, a few invalid.
	switch r := g.rng.IntN(100); {
	case r < 70:
		ws.Snapshot = seqno - 1 - min(seqno-1, g.rng.Uint64N(min(seqno, g.h+2)))
	case r < 97:
		ws.Snapshot = g.rng.Uint64N(seqno)
	default:
		ws.Snapshot = seqno + g.rng.Uint64N(2)
	}
	if g.rng.IntN(100) < 6 {
		ws.DDL = "ALTER TABLE ..."
		for range g.rng.IntN(3) { // 0: global
			ws.Tables = append(ws.Tables, oracleTables[g.rng.IntN(len(oracleTables))])
		}
		if g.rng.IntN(10) == 0 {
			ws.Keys = append(ws.Keys, g.key())
		}
		ws.Normalize()
		return ws
	}
	if g.rng.IntN(100) < 4 { // a transaction block with schema statements
		ws.Schema = writeset.Schema(1 + g.rng.IntN(2))
	}
	for range 1 + g.rng.IntN(3) {
		ws.Keys = append(ws.Keys, g.key())
	}
	for _, k := range ws.Keys {
		ws.Tables = append(ws.Tables, k.Table())
	}
	if g.rng.IntN(100) < 30 { // index entries of rows inserted or moved
		for range 1 + g.rng.IntN(2) {
			ws.IndexKeys = append(ws.IndexKeys, g.indexKey())
		}
	}
	if g.rng.IntN(100) < 30 { // rows relied on (foreign keys' parents)
		for range 1 + g.rng.IntN(2) {
			k := g.key()
			ws.SharedKeys = append(ws.SharedKeys, k)
			ws.Tables = append(ws.Tables, k.Table())
		}
	}
	if g.rng.IntN(100) < 40 { // a serializable transaction
		g.reads(&ws)
	}
	switch g.rng.IntN(20) {
	case 0: // keys unsorted and duplicated, tables too
		ws.Keys = append(ws.Keys, ws.Keys[0])
		ws.Tables = append(ws.Tables, ws.Tables[0])
	case 1: // an extra table
		ws.Tables = append(ws.Tables, oracleTables[g.rng.IntN(len(oracleTables))])
		ws.Normalize()
	case 2: // no table at all
		ws.Tables = nil
		slices.Sort(ws.Keys)
	default:
		ws.Normalize()
	}
	return ws
}

// indexKey is an index entry of a few hot values of a few tables' columns.
func (g *history) indexKey() writeset.Key {
	t := oracleTables[g.rng.IntN(len(oracleTables))]
	col := []string{"k", "j"}[g.rng.IntN(2)]
	if g.rng.IntN(4) == 0 {
		return writeset.IndexKey(t, col, oracleTexts[g.rng.IntN(len(oracleTexts))])
	}
	return writeset.IndexKey(t, col, int64(g.rng.IntN(5)-1))
}

// reads gives ws a serializable transaction's reads at random grains.
func (g *history) reads(ws *writeset.WriteSet) {
	if g.rng.IntN(3) == 0 {
		for range 1 + g.rng.IntN(2) {
			ws.ReadTables = append(ws.ReadTables, oracleTables[g.rng.IntN(len(oracleTables))])
		}
	}
	for range g.rng.IntN(4) {
		ws.ReadKeys = append(ws.ReadKeys, g.key())
	}
	for range g.rng.IntN(3) {
		t := oracleTables[g.rng.IntN(len(oracleTables))]
		if g.rng.IntN(3) == 0 { // a range over an index
			t = writeset.IndexTable(t, []string{"k", "j"}[g.rng.IntN(2)])
		}
		bound := func() []any {
			switch g.rng.IntN(4) {
			case 0:
				return nil // open
			case 1:
				return []any{int64(g.rng.IntN(2)), "x"} // two columns
			}
			return []any{int64(g.rng.IntN(5) - 1)}
		}
		lo, hi := bound(), bound()
		r := writeset.KeyRangeOf(t, lo, hi)
		if g.rng.IntN(3) == 0 { // a text prefix, after an integer or not
			var lead []any
			if g.rng.IntN(2) == 0 {
				lead = []any{int64(g.rng.IntN(2))}
			}
			r = writeset.KeyPrefixRange(t, lead, oraclePrefixes[g.rng.IntN(len(oraclePrefixes))])
		}
		if r.Prefix != "" || r.Contains(r.Lo) {
			ws.ReadRanges = append(ws.ReadRanges, r)
		}
	}
	if g.rng.IntN(4) == 0 { // a filter at a high rate, for false positives
		var keys []writeset.Key
		for range 1 + g.rng.IntN(6) {
			keys = append(keys, g.key())
		}
		if g.rng.IntN(3) == 0 {
			keys = append(keys, g.indexKey())
		}
		ws.ReadFilter = writeset.NewFilter(keys, 0.3)
	}
}

// TestOracle compares every decision of the Certifier, and of copies of it
// saved and loaded along the way, with the naive checker.
func TestOracle(t *testing.T) {
	histories := 3000
	if testing.Short() {
		histories = 300
	}
	horizons := []uint64{1, 2, 3, 5, 8, 13, 40, 1 << 20}
	for i := range histories {
		seed := uint64(i)
		h := horizons[i%len(horizons)]
		steps := 150
		if i%20 == 0 {
			steps = 1000
		}
		if !runHistory(t, seed, h, steps) {
			return
		}
	}
}

func runHistory(t *testing.T, seed, h uint64, steps int) bool {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	g := &history{rng: rng, h: h}
	want := &naive{h: h}
	c := New(h)
	var d *Certifier // a copy loaded from a Save of c, once there is one
	fail := func(format string, args ...any) bool {
		t.Errorf("seed %d, horizon %d: %s", seed, h, fmt.Sprintf(format, args...))
		return false
	}
	type pending struct {
		seqno uint64
		ws    writeset.WriteSet
	}
	var late *pending // passed, to be committed after the next Certify
	commit := func(ws *writeset.WriteSet, seqno uint64) {
		want.commit(ws, seqno)
		c.Commit(ws, seqno)
		if d != nil {
			d.Commit(ws, seqno)
		}
	}
	seqno := 1 + rng.Uint64N(3)
	for range steps {
		seqno += 1
		if rng.IntN(20) == 0 {
			seqno += rng.Uint64N(4) // positions with no write set
		}
		ws := g.writeSet(seqno)
		orig := cloneWS(&ws)
		exp := want.certify(&ws, seqno)
		got := c.Certify(&ws, seqno)
		if got != exp {
			return fail("position %d, snapshot %d, keys %q, shared %q, tables %q, reads %q, read keys %q, ranges %q, filter %v, DDL %q: got %+v, want %+v",
				seqno, orig.Snapshot, orig.Keys, orig.SharedKeys, orig.Tables, orig.ReadTables, orig.ReadKeys, orig.ReadRanges, orig.ReadFilter != nil, orig.DDL, got, exp)
		}
		if d != nil {
			if got2 := d.Certify(&ws, seqno); got2 != exp {
				return fail("position %d: loaded copy got %+v, want %+v", seqno, got2, exp)
			}
		}
		if late != nil {
			commit(&late.ws, late.seqno)
			late = nil
		}
		if got.OK() {
			switch r := rng.IntN(100); {
			case r < 80:
				commit(&ws, seqno)
			case r < 83:
				late = &pending{seqno, ws}
			default:
				// Apply failed: not committed.
			}
		}
		if !slices.Equal(ws.Keys, orig.Keys) || !slices.Equal(ws.SharedKeys, orig.SharedKeys) || !slices.Equal(ws.Tables, orig.Tables) {
			return fail("position %d: write set modified", seqno)
		}
		if late == nil {
			if n := want.tracked(); c.Len() != n {
				return fail("position %d: Len = %d, want %d", seqno, c.Len(), n)
			}
		}
		if rng.IntN(40) == 0 {
			var buf bytes.Buffer
			if err := c.Save(&buf); err != nil {
				return fail("Save: %v", err)
			}
			saved := bytes.Clone(buf.Bytes())
			var err error
			if d, err = Load(&buf); err != nil {
				return fail("position %d: Load: %v", seqno, err)
			}
			var again bytes.Buffer
			if err := d.Save(&again); err != nil || !bytes.Equal(again.Bytes(), saved) {
				return fail("position %d: Save of the loaded copy differs (%v)", seqno, err)
			}
			if d.Len() != c.Len() || d.LastSeqno() != c.LastSeqno() {
				return fail("position %d: loaded Len/LastSeqno %d/%d, want %d/%d", seqno, d.Len(), d.LastSeqno(), c.Len(), c.LastSeqno())
			}
		}
	}
	return true
}

// A serializable transaction whose many keys read travel as a filter
// (writeset.CompactReads) fails whenever a key it read was written after
// its snapshot, and otherwise fails, through the filter's false
// positives, at no more than twice the rate the filter was configured
// for. The origin tells those aborts apart with the exact keys.
func TestFilterReadsFalsePositives(t *testing.T) {
	for _, fpRate := range []float64{writeset.DefaultFilterFPRate, 0.05} {
		rng := rand.New(rand.NewPCG(7, 7))
		const trials = 10000
		c := New(1 << 20)
		seqno := uint64(0)
		falsePositives, clean := 0, 0
		for i := range trials {
			read := make([]writeset.Key, writeset.FilterMinKeys+1+rng.IntN(500))
			for j := range read {
				read[j] = writeset.EncodeKey("r", rng.Int64N(1<<40))
			}
			tx := writeset.WriteSet{Snapshot: seqno, Keys: []writeset.Key{writeset.EncodeKey("w", int64(i))}, Tables: []string{"w"}, ReadKeys: read}
			tx.Normalize()
			exact := tx.CompactReads(fpRate)
			if tx.ReadFilter == nil || tx.ReadKeys != nil || len(exact) <= writeset.FilterMinKeys {
				t.Fatal("no filter")
			}
			// Another transaction commits one key after tx's snapshot: one
			// tx read (a real conflict) or, mostly, one it did not.
			conflict := rng.IntN(10) == 0
			other := writeset.EncodeKey("r", rng.Int64N(1<<40))
			if conflict {
				other = exact[rng.IntN(len(exact))]
			}
			ow := writeset.WriteSet{Snapshot: seqno, Keys: []writeset.Key{other}, Tables: []string{"r"}}
			seqno++
			if r := c.Certify(&ow, seqno); !r.OK() {
				t.Fatalf("writer: %v", r)
			}
			c.Commit(&ow, seqno)
			seqno++
			r := c.Certify(&tx, seqno)
			switch {
			case conflict && (r.Reason != ReadChanged || r.Key != other || writeset.IsFilterFalsePositive(exact, r.Key)):
				t.Fatalf("trial %d: a key read and written after the snapshot: %+v", i, r)
			case conflict:
			case !r.OK():
				if r.Reason != ReadChanged || !r.ViaFilter || !writeset.IsFilterFalsePositive(exact, r.Key) {
					t.Fatalf("trial %d: %+v is no false positive of the filter", i, r)
				}
				falsePositives++
				clean++
			default:
				clean++
				c.Commit(&tx, seqno)
			}
		}
		rate := float64(falsePositives) / float64(clean)
		t.Logf("false-positive aborts: %d of %d (%.4f; filters sized for %.4f)", falsePositives, clean, rate, fpRate)
		if rate > 2*fpRate {
			t.Fatalf("false-positive rate %.4f over twice %.4f", rate, fpRate)
		}
	}
}
