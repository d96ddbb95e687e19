// Package certify is certa's deterministic certifier. Every node hands it the
// same write sets in the same (log) order and gets the same decision for each:
// a write set passes iff nothing committed after its snapshot and before its
// position wrote one of its keys or changed the schema of one of its tables
// (snapshot isolation, first committer wins), nor wrote a row it relies on
// (a shared key: a foreign key's parent) or relied on a row it writes, nor,
// for a serializable transaction, wrote a row it read (by key, in a key
// range scanned, in a Bloom filter of keys, or in a table read whole).
//
// The package is pure: no I/O other than the io.Writer/io.Reader handed to
// Save and Load, no clocks, no goroutines, no randomness. Its decisions are a
// function of the sequence of calls alone. A Certifier is not safe for
// concurrent use; the node's apply loop owns it.
//
// The certifier remembers, for every key committed within the last H
// positions (the horizon), the position of its last commit, and likewise for
// DDL. A write set whose snapshot is more than H positions behind is refused
// as too old, so older commits can be forgotten: memory is bounded by the keys
// written in the last H positions. See DESIGN.md in this directory.
package certify

import (
	"fmt"
	"slices"

	"certa/writeset"
)

// Certifier holds the certification window. The zero value is not usable;
// create one with New or Load.
type Certifier struct {
	horizon uint64

	started bool   // a position has been certified
	last    uint64 // the last position certified (if started)

	committed  bool   // a position has been committed
	lastCommit uint64 // the last position committed (if committed)

	// keys maps every key committed at a position in the window to the
	// position of its last commit; shared likewise for the keys commits
	// relied on (writeset.WriteSet.SharedKeys). commits and keyq hold the
	// same commits in position order (commits[i] owns the next
	// commits[i].n keys of keyq, then its commits[i].shared shared keys,
	// then its commits[i].index index keys, which only scans of ranges
	// see), so that pruning visits each recorded key once.
	keys    map[writeset.Key]uint64
	shared  map[writeset.Key]uint64
	commits fifo[commitRec]
	keyq    fifo[writeset.Key]

	// tableDDL maps a table to the position of the last DDL in the window
	// that named it; global is the position of the last DDL in the window
	// that named no table (it changed every table). ddls holds them in
	// position order for pruning.
	tableDDL  map[string]uint64
	hasGlobal bool
	global    uint64
	ddls      fifo[ddlRec]

	// tableWrite maps a table to the position of the last commit in the
	// window that wrote one of its keys, for the reads of serializable
	// write sets. It is derived from keys alone (Load rebuilds it), so the
	// saved form needs nothing more.
	tableWrite map[string]uint64
}

type commitRec struct {
	seqno  uint64
	n      int // number of keys in keyq
	shared int // number of shared keys in keyq after them
	index  int // number of index keys in keyq after those
}

type ddlRec struct {
	seqno  uint64
	tables []string // nil when global
}

// New returns an empty certifier with horizon h: a write set at position n
// whose snapshot s has n-s > h is refused as TooOld. h must be positive (New
// panics otherwise). Every node of a cluster must use the same h, from the
// first position on; a certifier restored by Load keeps the saved one.
func New(h uint64) *Certifier {
	if h == 0 {
		panic("certify: horizon must be positive")
	}
	return &Certifier{
		horizon:    h,
		keys:       make(map[writeset.Key]uint64),
		shared:     make(map[writeset.Key]uint64),
		tableDDL:   make(map[string]uint64),
		tableWrite: make(map[string]uint64),
	}
}

// Horizon returns the horizon H the certifier was created with.
func (c *Certifier) Horizon() uint64 { return c.horizon }

// Len returns the number of keys the certifier tracks (keys whose last commit
// is within the horizon, written or shared). For metrics.
func (c *Certifier) Len() int { return len(c.keys) + len(c.shared) }

// LastSeqno returns the last position passed to Certify, or 0 if none was.
func (c *Certifier) LastSeqno() uint64 { return c.last }

// Certify decides whether ws, ordered at position seqno, may commit. It does
// not record ws: call Commit for that once ws has been applied.
//
// Positions must strictly increase from one call to the next (gaps are
// allowed, and do not change any decision); Certify panics otherwise, as that
// is a bug in the caller that would make nodes diverge. Every position that
// carries a write set must be certified, in log order, including positions
// whose write set is later not applied, so that the horizon advances the same
// everywhere.
//
// The rules, in the order they are checked:
//
//   - a DDL write set (ws.IsDDL()) always passes: it runs in total order
//     isolation, alone at its position;
//   - Invalid if ws.Snapshot >= seqno;
//   - TooOld if seqno - ws.Snapshot > H;
//   - SchemaChanged if a DDL committed at a position p with
//     ws.Snapshot < p < seqno named one of ws.Tables or named no table (a
//     global DDL), or named any table if ws changes the schema of every
//     table itself (ws.Schema == SchemaAll). Result.Table is the smallest such
//     table of ws.Tables ("" if none), Result.ConflictSeqno the last DDL
//     touching it;
//   - Conflict if a key of ws.Keys was last committed (written, or relied
//     on as a shared key) at a position p with ws.Snapshot < p < seqno, or a
//     key of ws.SharedKeys was last written at such a position (two write
//     sets that only share a key do not conflict). Result.Table is the
//     table of the smallest such key (in byte order) and
//     Result.ConflictSeqno the position of that commit;
//   - ReadChanged if a write set committed at a position p with
//     ws.Snapshot < p < seqno wrote a key that a serializable
//     transaction's reads cover: a key of a table of ws.ReadTables (or a
//     DDL named the table), a key of ws.ReadKeys, a key in one of
//     ws.ReadRanges, or one ws.ReadFilter may hold; or a DDL at such a p
//     named the table of a read key or range (any DDL, for a filter).
//     Result.Table is the table to blame (the smallest such table, or the
//     table of Result.Key), Result.Key the key for the finer grains
//     (the smallest, a range's before a filter's; ViaFilter if only the
//     filter holds it) and Result.ConflictSeqno the last write of it;
//   - otherwise Pass.
//
// ws.Tables must name every table of ws.Keys: SchemaChanged looks only at
// ws.Tables. Certify neither modifies nor retains ws, and does not require its
// Keys and Tables to be sorted; decisions depend only on their contents.
//
// Only commits made (by Commit) before this call are seen. A caller that
// certifies a position before deciding whether an earlier one commits must
// itself hold back a write set that shares a key or table with the undecided
// one: the certifier cannot see that conflict.
func (c *Certifier) Certify(ws *writeset.WriteSet, seqno uint64) Result {
	if c.started && seqno <= c.last {
		panic(fmt.Sprintf("certify: position %d certified after position %d", seqno, c.last))
	}
	c.started, c.last = true, seqno
	c.prune()

	if ws.IsDDL() {
		return Result{}
	}
	snap := ws.Snapshot
	if snap >= seqno {
		return Result{Reason: Invalid}
	}
	if seqno-snap > c.horizon {
		return Result{Reason: TooOld}
	}
	// Everything still recorded is at a position < seqno (it was committed
	// before this call), and everything pruned is at a position <= snap.
	if c.ddls.len() > 0 {
		if r, ok := c.schemaChanged(ws); ok {
			return r
		}
	}
	found := false
	var key writeset.Key
	var at uint64
	for _, k := range ws.Keys {
		// A missing key reads as 0, which is never > snap.
		if p := max(c.keys[k], c.shared[k]); p > snap && (!found || k < key) {
			found, key, at = true, k, p
		}
	}
	for _, k := range ws.SharedKeys {
		if p := c.keys[k]; p > snap && (!found || k < key) {
			found, key, at = true, k, p
		}
	}
	if found {
		return Result{Reason: Conflict, Table: key.Table(), ConflictSeqno: at}
	}
	if len(ws.ReadTables) > 0 || len(ws.ReadKeys) > 0 || len(ws.ReadRanges) > 0 || ws.ReadFilter != nil {
		return c.readChanged(ws)
	}
	return Result{}
}

// readChanged applies the ReadChanged rule of Certify, grain by grain:
// whole tables, then keys read, then ranges and the filter (which look at
// every key committed after the snapshot, a window that is short for any
// write set that can still pass).
func (c *Certifier) readChanged(ws *writeset.WriteSet) Result {
	snap := ws.Snapshot
	found := false
	var table string
	var at uint64
	for _, t := range ws.ReadTables {
		p := max(c.tableWrite[t], c.tableDDL[t])
		if p > snap && (!found || t < table) {
			found, table, at = true, t, p
		}
	}
	if found { // a DDL of every table is SchemaChanged already
		return Result{Reason: ReadChanged, Table: table, ConflictSeqno: at}
	}
	var key writeset.Key
	for _, k := range ws.ReadKeys {
		if p := c.keys[k]; p > snap && (!found || k < key) {
			found, key, at = true, k, p
		}
	}
	if found {
		return Result{Reason: ReadChanged, Table: key.Table(), Key: key, ConflictSeqno: at}
	}
	for _, r := range ws.ReadRanges {
		t := writeset.BaseTable(r.Table()) // an index's schema is its table's
		if p := c.tableDDL[t]; p > snap && (!found || t < table) {
			found, table, at = true, t, p
		}
	}
	for _, k := range ws.ReadKeys {
		if p := c.tableDDL[k.Table()]; p > snap && (!found || k.Table() < table) {
			found, table, at = true, k.Table(), p
		}
	}
	if ws.ReadFilter != nil && c.ddls.len() > 0 {
		// The filter does not say its tables: any DDL since the snapshot.
		if p := c.ddls.buf[len(c.ddls.buf)-1].seqno; p > snap && !found {
			found, at = true, p
		}
	}
	if found {
		return Result{Reason: ReadChanged, Table: table, ConflictSeqno: at}
	}
	if len(ws.ReadRanges) > 0 || ws.ReadFilter != nil {
		return c.scanChanged(ws)
	}
	return Result{}
}

// scanChanged applies the range and filter part of the ReadChanged rule:
// it visits the keys written by every commit after ws's snapshot, newest
// first, and reports the smallest key a range of ws holds or, failing
// that, the smallest its filter may hold.
func (c *Certifier) scanChanged(ws *writeset.WriteSet) Result {
	var res Result
	end := len(c.keyq.buf)
	for i := len(c.commits.buf) - 1; i >= c.commits.head; i-- {
		rec := c.commits.buf[i]
		if rec.seqno <= ws.Snapshot {
			break
		}
		for _, k := range c.keyq.buf[end-rec.index : end] {
			if readsKey(ws, k, &res) {
				res.ConflictSeqno = rec.seqno // index keys: newest first, so their last
			}
		}
		end -= rec.index + rec.shared
		written := c.keyq.buf[end-rec.n : end]
		end -= rec.n
		for _, k := range written {
			if c.keys[k] == rec.seqno && readsKey(ws, k, &res) { // k's last write
				res.ConflictSeqno = rec.seqno
			}
		}
	}
	if res.Key != "" {
		res.Reason, res.Table = ReadChanged, res.Key.Table()
	}
	return res
}

// readsKey reports whether k, written after ws's snapshot, is in one of
// ws's ranges or may be in its filter and is a better culprit than the
// one res holds (a range's before a filter's, then the smaller key); if so
// it records k in res.
func readsKey(ws *writeset.WriteSet, k writeset.Key, res *Result) bool {
	if k == res.Key {
		return false // found already, at a newer position
	}
	inRange := false
	for _, r := range ws.ReadRanges {
		if r.Contains(k) {
			inRange = true
			break
		}
	}
	if !inRange && (ws.ReadFilter == nil || !ws.ReadFilter.MayContain(k)) {
		return false
	}
	viaFilter := !inRange
	better := res.Key == "" || res.ViaFilter && !viaFilter || res.ViaFilter == viaFilter && k < res.Key
	if better {
		res.Key, res.ViaFilter = k, viaFilter
	}
	return better
}

// schemaChanged applies the SchemaChanged rule of Certify to a DML write set.
func (c *Certifier) schemaChanged(ws *writeset.WriteSet) (Result, bool) {
	snap := ws.Snapshot
	found := false
	var table string
	var at uint64
	for _, t := range ws.Tables {
		p, ok := c.tableDDL[t]
		if c.hasGlobal && (!ok || c.global > p) {
			p, ok = c.global, true
		}
		if ok && p > snap && (!found || t < table) {
			found, table, at = true, t, p
		}
	}
	if !found && c.hasGlobal && c.global > snap {
		// A write set that names no table still depends on the schema.
		found, table, at = true, "", c.global
	}
	if last := c.ddls.buf[len(c.ddls.buf)-1]; !found && ws.Schema == writeset.SchemaAll && last.seqno > snap {
		// Its own schema statements may touch any table.
		found, table, at = true, "", last.seqno
	}
	return Result{Reason: SchemaChanged, Table: table, ConflictSeqno: at}, found
}

// Commit records that ws, which passed Certify at position seqno, has been
// applied: its keys were last written at seqno, its shared keys last relied
// on at seqno, and if it is a DDL, the schema
// of each of ws.Tables (of every table, if ws.Tables is empty) changed at
// seqno; if it changed the schema itself (ws.Schema), likewise of its Tables
// or, for SchemaAll, of every table. Call it only for write sets that passed and were applied; a write set
// whose apply failed is simply not committed and causes no later conflict.
//
// Commits must come in increasing position order, each at a position already
// certified (seqno <= LastSeqno()); Commit panics otherwise. Normally a caller
// commits (or not) a position before certifying the next one; see Certify for
// what certifying ahead implies. Commit copies what it keeps from ws (the Key
// strings are shared, being immutable), so ws may be reused afterwards.
func (c *Certifier) Commit(ws *writeset.WriteSet, seqno uint64) {
	if !c.started || seqno > c.last {
		panic(fmt.Sprintf("certify: commit of position %d, which was not certified (last certified %d)", seqno, c.last))
	}
	if c.committed && seqno <= c.lastCommit {
		panic(fmt.Sprintf("certify: commit of position %d after position %d", seqno, c.lastCommit))
	}
	c.committed, c.lastCommit = true, seqno
	if len(ws.Keys) > 0 || len(ws.SharedKeys) > 0 || len(ws.IndexKeys) > 0 {
		for _, k := range ws.Keys {
			c.keys[k] = seqno
			c.tableWrite[k.Table()] = seqno
		}
		for _, k := range ws.SharedKeys {
			c.shared[k] = seqno
		}
		c.keyq.push(ws.Keys...)
		c.keyq.push(ws.SharedKeys...)
		c.keyq.push(ws.IndexKeys...)
		c.commits.push(commitRec{seqno: seqno, n: len(ws.Keys), shared: len(ws.SharedKeys), index: len(ws.IndexKeys)})
	}
	if ws.IsDDL() || ws.Schema != writeset.SchemaNone {
		if len(ws.Tables) == 0 || ws.Schema == writeset.SchemaAll {
			c.hasGlobal, c.global = true, seqno
			c.ddls.push(ddlRec{seqno: seqno})
		} else {
			for _, t := range ws.Tables {
				c.tableDDL[t] = seqno
			}
			c.ddls.push(ddlRec{seqno: seqno, tables: slices.Clone(ws.Tables)})
		}
	}
	c.prune() // a late commit may already be out of the window
}

// prune forgets every commit at a position <= last-H. Any write set certified
// after last has a position n > last, so either its snapshot is
// >= n-H > last-H (and such commits are not after it) or it is TooOld.
func (c *Certifier) prune() {
	if c.last < c.horizon {
		return
	}
	limit := c.last - c.horizon
	for c.commits.len() > 0 {
		r := c.commits.front(1)[0]
		if r.seqno > limit {
			break
		}
		for _, k := range c.keyq.front(r.n) {
			if p, ok := c.keys[k]; ok && p == r.seqno {
				delete(c.keys, k)
			}
			if t := k.Table(); c.tableWrite[t] == r.seqno {
				delete(c.tableWrite, t)
			}
		}
		c.keyq.drop(r.n)
		for _, k := range c.keyq.front(r.shared) {
			if p, ok := c.shared[k]; ok && p == r.seqno {
				delete(c.shared, k)
			}
		}
		c.keyq.drop(r.shared + r.index)
		c.commits.drop(1)
	}
	for c.ddls.len() > 0 {
		r := c.ddls.front(1)[0]
		if r.seqno > limit {
			break
		}
		if r.tables == nil {
			if c.hasGlobal && c.global == r.seqno {
				c.hasGlobal, c.global = false, 0
			}
		}
		for _, t := range r.tables {
			if p, ok := c.tableDDL[t]; ok && p == r.seqno {
				delete(c.tableDDL, t)
			}
		}
		c.ddls.drop(1)
	}
}
