// Package engine defines what certa needs from the database engine under a
// node: local transactions that run client statements and capture their write
// sets, and high-priority, in-order application of certified write sets.
// It is modelled on Galera's wsrep provider calls. engine/sqlite implements it
// on embedded SQLite; engine/enginetest is the conformance suite that every
// implementation passes.
package engine

import (
	"context"
	"errors"
	"io"
	"time"

	"certa/result"
	"certa/writeset"
)

// Engine is one node's local database.
type Engine interface {
	// Begin starts a local transaction reading the latest applied state.
	// The returned Tx is used by one goroutine at a time. Read-only work never
	// waits for writers. Begin waits for a free connection at most until ctx ends.
	Begin(ctx context.Context) (Tx, error)

	// Read runs one statement on its own, as a transaction that only reads
	// the latest applied state, and reports its result to w; it is what an
	// autocommit query costs without a Tx. A statement that may write or
	// lock rows gets ErrNotReadOnly, with nothing run and nothing reported
	// to w: run it in a Tx. An engine may answer ErrNotReadOnly also for a
	// statement it does not run without a Tx (the SQLite engine: one that
	// fails to prepare, or uses CAST); the Tx then reports its result or
	// error. Read waits for a free connection at most until ctx ends, and
	// ctx ending interrupts the statement (57014).
	Read(ctx context.Context, sql string, w result.Writer, args ...any) error

	// CheckDDL validates a schema statement (CREATE/ALTER/DROP of tables and
	// indexes) without changing anything. It returns the statement to
	// replicate, as the engine executes it (a client's PostgreSQL may be
	// translated; executing it again translates nothing), and the tables it
	// touches (nil: unknown, to be treated as every table). It refuses, with
	// a *sqlerr.Error, statements that would break replication, such as a
	// table without a primary key (42P16), and those it finds would fail
	// (others fail at their position, as an item of Apply). It returns
	// ErrRunAsTransaction for a statement the engine replicates by its
	// rows rather than as a statement. Its notices go to ctx's client
	// (sqlerr.WithNotices), but for a routine definition (CREATE
	// FUNCTION, CREATE PROCEDURE): an engine that checks a routine's
	// body checks it in the session's try (Tx.ExecLocal), whose notices
	// (PL/pgSQL's warnings) are then the client's.
	CheckDDL(ctx context.Context, stmt string) (DDL, error)

	// Apply applies certified write sets in order in one engine transaction
	// and records upTo as the applied seqno in that same transaction (upTo is
	// at least the last item's seqno; items may be empty). Each item applies
	// completely or not at all: an item that fails deterministically (a
	// constraint violation, a DDL statement that fails) gets its Err set to a
	// *sqlerr.Error and its changes are rolled back, and the other items still
	// apply. The seqnos of failed items are recorded (see FailedSeqnos).
	// Apply returns an error only when the batch could not be applied at all;
	// the node must then stop rather than diverge, except when the error
	// wraps ErrNoSpace: then the same batch (with the items' Err cleared)
	// may be applied again once space is freed, and what of it stayed the
	// first time (an engine may commit a batch in parts) is not applied
	// twice.
	//
	// Apply never waits behind a local transaction for longer than the
	// configured grace. A local transaction holding what Apply needs and
	// idle between statements is set aside (SQLite parks it: it goes on
	// later, and fails with 40001 only if what it touched changed) or
	// aborted (its next statement fails with 40001); one busy in a statement
	// is brute-force aborted (its next statement and WriteSet fail with
	// 40001 wrapping ErrAbortedForApply). Either way it cannot commit over
	// the applied write set: it fails, or its write set keeps its snapshot
	// and names the rows, so that certification refuses it.
	// An item whose transaction this engine holds (Tx.HandOver) commits
	// that transaction at its position instead of applying its rows.
	// Apply is called from one goroutine at a time.
	Apply(ctx context.Context, items []ApplyItem, upTo uint64) error

	// CheckChanges reports an error when ws's row changes are not in this
	// engine's format (they would fail at Apply on every node): a node
	// refuses such a write set before it reaches the log. It reads no
	// data and may be called concurrently with anything.
	CheckChanges(ws *writeset.WriteSet) error

	// AppliedSeqno returns the seqno recorded by the last Apply (0 when new).
	AppliedSeqno() (uint64, error)

	// FailedSeqnos returns which seqnos in [from, to] failed in Apply, so that
	// a node replaying its log after a restart certifies as before.
	FailedSeqnos(from, to uint64) (map[uint64]bool, error)

	// Snapshot captures the current applied state. It must not run
	// concurrently with Apply; the returned snapshot may be written out while
	// Apply continues.
	Snapshot(ctx context.Context) (Snapshot, error)

	// Restore replaces the whole database with the contents written by a
	// Snapshot's WriteTo (including its applied seqno). Local transactions
	// open at the time fail.
	Restore(ctx context.Context, r io.Reader) error

	// Describe parses one statement without running it and returns the
	// types of its parameters ($1 is params[0]; a parameter whose type the
	// statement does not show is Text) and of its result columns (nil: no
	// result set; a column whose type is unknown until it runs is Unknown).
	Describe(ctx context.Context, sql string) (params []result.Type, cols []result.Column, err error)

	// Catalog answers a query on PostgreSQL's system catalogs (pg_catalog,
	// information_schema) from this node's schema, as far as psql and
	// drivers use them; other catalog queries fail with 0A000.
	Catalog(ctx context.Context, sql string, w result.Writer, args ...any) error

	// RunsPostgreSQL reports whether the engine runs PostgreSQL itself.
	// Queries on its system catalogs are then ordinary statements, run in
	// the session's transaction (which sees its own schema changes) rather
	// than by Catalog; and run-time parameters are PostgreSQL's own: a
	// session checks each SET with Setting, keeps the values, and passes
	// them in the context (WithSettings) of every Begin and Read.
	RunsPostgreSQL() bool

	// Setting runs set, a SET or RESET of parameter name, in a
	// transaction it rolls back, after the settings ctx carries
	// (WithSettings), and returns the value set leaves name with
	// (PostgreSQL's own check and form of it; "" for its default). Only
	// an engine that RunsPostgreSQL has settings; others fail.
	Setting(ctx context.Context, set, name string) (string, error)

	// Checksums returns a checksum of every user table's rows, read at one
	// snapshot, and the applied seqno of that snapshot: two nodes at the
	// same seqno must report the same checksums. After the tables an
	// engine may sum other state that must not differ (roles, owners),
	// each under a name no table has.
	Checksums(ctx context.Context) (Checksums, error)

	// SequencesWanted returns the channel on which the engine names the
	// sequences (of SERIAL and identity columns) this node needs values
	// of: it has none left, or few. The caller reserves them
	// (ReserveSequence) and grants them (GrantSequence). A name may come
	// again later; one that no longer exists is ignored by ReserveSequence.
	SequencesWanted() <-chan string

	// ReserveSequence returns the write set that reserves the next block of
	// values of a sequence, read at the latest applied state, and the block
	// it reserves: commit the write set through the log, and once it has
	// committed, GrantSequence(block). Two nodes reserving at once conflict
	// in certification, so no two nodes ever get the same block. It returns
	// a nil write set if the sequence does not exist (any more).
	ReserveSequence(ctx context.Context, name string) (*writeset.WriteSet, SequenceBlock, error)

	// GrantSequence gives this node a committed block of values to hand
	// out. A block of a sequence that was dropped (or dropped and made
	// again) since it was reserved is ignored. A block of Count 0 (the
	// reservation did not commit) lets the engine ask for the name again.
	GrantSequence(b SequenceBlock)

	// WaitSequenceValues waits until this node has values of every
	// sequence (or of the one named, if name is not empty), or ctx ends.
	WaitSequenceValues(ctx context.Context, name string) error

	// NewSession returns the engine's handle for one client session.
	// The session's Begin, Read, Describe and Setting see what it made
	// for itself on this node (PostgreSQL's temporary tables), which no
	// other session sees and which is never replicated.
	NewSession() Session

	// Close closes the engine; open transactions fail.
	Close() error
}

// Session is one client session's use of the engine. Its methods are
// the Engine's, run where the session's own objects are: an engine that
// runs PostgreSQL keeps (pins) the backend a session made a temporary
// object on for the session's later transactions, reads and
// descriptions, and discards it at Close, so that those objects never
// reach another session. A pinned backend counts against the engine's
// connections; between transactions it holds no locks. A Session is
// used by one goroutine at a time; its Txs must end before Close.
type Session interface {
	// Begin is Engine.Begin on the session's backend.
	Begin(ctx context.Context) (Tx, error)
	// Read is Engine.Read on the session's backend. A statement that
	// writes only the session's temporary tables is read-only to the
	// cluster: Read runs it and keeps what it wrote.
	Read(ctx context.Context, sql string, w result.Writer, args ...any) error
	// Describe is Engine.Describe on the session's backend.
	Describe(ctx context.Context, sql string) (params []result.Type, cols []result.Column, err error)
	// Catalog is Engine.Catalog as the session sees the catalogs: with
	// its temporary objects, on an engine that emulates them.
	Catalog(ctx context.Context, sql string, w result.Writer, args ...any) error
	// Setting is Engine.Setting on the session's backend; if that
	// backend keeps the session's state for good, the value stays there
	// too, unless ctx says the SET is in a block (WithinBlock).
	Setting(ctx context.Context, set, name string) (string, error)
	// Close ends the session: what it made for itself is dropped. If
	// its backend was lost meanwhile (the applier had to end it, or a
	// Restore), its later calls fail with 57P01 and the client must
	// connect again. Safe to call more than once.
	Close()
}

// ErrSessionLost is wrapped by the error of every call of a Session whose
// own objects (temporary tables) were lost with its backend.
var ErrSessionLost = errors.New("the session's temporary objects were lost with its backend")

type settingsKey struct{}

// WithSettings returns ctx carrying a session's run-time parameters (name
// to value), which an engine that runs PostgreSQL applies to what it
// begins (Begin) or reads (Read) under it.
func WithSettings(ctx context.Context, settings map[string]string) context.Context {
	if len(settings) == 0 {
		return ctx
	}
	return context.WithValue(ctx, settingsKey{}, settings)
}

// SettingsFrom returns the settings ctx carries (WithSettings), or nil.
func SettingsFrom(ctx context.Context) map[string]string {
	s, _ := ctx.Value(settingsKey{}).(map[string]string)
	return s
}

type blockKey struct{}

// WithinBlock returns ctx saying that what runs under it is a statement
// of the client's transaction block: a SET there (Session.Setting) lasts
// only as long as the block, whose end the session decides.
func WithinBlock(ctx context.Context) context.Context {
	return context.WithValue(ctx, blockKey{}, true)
}

// InBlock reports whether ctx says WithinBlock.
func InBlock(ctx context.Context) bool {
	b, _ := ctx.Value(blockKey{}).(bool)
	return b
}

type userKey struct{}

// WithUser returns ctx carrying the name of the session's user, which an
// engine that does not run PostgreSQL answers CURRENT_USER with.
func WithUser(ctx context.Context, user string) context.Context {
	if user == "" {
		return ctx
	}
	return context.WithValue(ctx, userKey{}, user)
}

// UserFrom returns the user ctx carries (WithUser), or "".
func UserFrom(ctx context.Context) string {
	u, _ := ctx.Value(userKey{}).(string)
	return u
}

// SequenceValues are the values a session took last from its sequences,
// by name, and the last of all: currval and lastval, on an engine whose
// connections no session owns. One session uses it at a time.
type SequenceValues struct {
	ByName map[string]int64
	Last   int64
	Any    bool // Last is defined
	// LastName names the sequence Last came from, if known: lastval is
	// that sequence's currval, which a later setval changes.
	LastName string
}

// LastValue is what lastval answers: the last value of the sequence
// that gave the last one (ok false: none was taken).
func (s *SequenceValues) LastValue() (v int64, ok bool) {
	if v, ok := s.ByName[s.LastName]; ok && s.LastName != "" {
		return v, true
	}
	return s.Last, s.Any
}

// Took records that the session took v from sequence name.
func (s *SequenceValues) Took(name string, v int64) {
	if s.ByName == nil {
		s.ByName = map[string]int64{}
	}
	s.ByName[name], s.Last, s.Any, s.LastName = v, v, true, name
}

type sequenceValuesKey struct{}

// WithSequenceValues returns ctx carrying the session's SequenceValues.
func WithSequenceValues(ctx context.Context, v *SequenceValues) context.Context {
	return context.WithValue(ctx, sequenceValuesKey{}, v)
}

// SequenceValuesFrom returns the SequenceValues ctx carries, or nil.
func SequenceValuesFrom(ctx context.Context) *SequenceValues {
	v, _ := ctx.Value(sequenceValuesKey{}).(*SequenceValues)
	return v
}

// SequenceBlock is a range of values of a sequence reserved for one node.
type SequenceBlock struct {
	Name    string
	Created uint64 // the seqno of the schema change that made the sequence
	First   int64
	Count   int64
}

// ErrNoSequenceValues is wrapped, as a *NoSequenceValuesError naming the
// sequence, in the error of a statement that needed a value of a sequence
// while this node had none reserved; the statement may be run again once
// WaitSequenceValues for that sequence returns.
var ErrNoSequenceValues = errors.New("no values of the sequence are reserved on this node")

// NoSequenceValuesError names the sequence of an ErrNoSequenceValues.
type NoSequenceValuesError struct{ Sequence string }

func (e *NoSequenceValuesError) Error() string {
	return "no values of sequence " + e.Sequence + " are reserved on this node"
}

// Is makes errors.Is(err, ErrNoSequenceValues) true.
func (e *NoSequenceValuesError) Is(target error) bool { return target == ErrNoSequenceValues }

// DDL is a schema statement checked by CheckDDL.
type DDL struct {
	Statement string   // what to replicate and execute at its position
	Tables    []string // the tables it touches, sorted; nil: every table
}

// Snapshot is a consistent copy of an engine's state.
type Snapshot interface {
	// WriteTo writes the copy to w.
	WriteTo(w io.Writer) (int64, error)
	// Release frees the copy. Safe to call more than once.
	Release()
}

// Checksums is a node's data summarised at one applied seqno.
type Checksums struct {
	Seqno  uint64          `json:"applied_seqno"`
	Tables []TableChecksum `json:"tables"`
}

// TableChecksum summarises one table: its row count and a hash of its rows
// in primary-key order.
type TableChecksum struct {
	Table string `json:"table"`
	Rows  int64  `json:"rows"`
	Sum   string `json:"checksum"`
}

// ErrRunAsTransaction is CheckDDL's answer for a schema statement the
// engine replicates as a transaction, its rows carried as any other's
// (the PostgreSQL engine's CREATE TABLE AS, a column added whose values
// travel as rows): run it in a Tx of its own, as a block's schema
// statement (Tx.ExecSchema).
var ErrRunAsTransaction = errors.New("the statement runs as a transaction")

// ErrNotReadOnly is Read's answer for a statement it does not run.
var ErrNotReadOnly = errors.New("statement is not read-only")

// ErrAbortedForApply is wrapped by the 40001 of a local transaction the
// engine aborted because applying a replicated commit needed what it held.
var ErrAbortedForApply = errors.New("aborted so that a replicated commit could be applied")

// ErrNoSpace means the engine ran out of disk space.
var ErrNoSpace = errors.New("no space left on the device")

// ApplyItem is one certified write set to apply at its position.
type ApplyItem struct {
	Seqno uint64
	WS    *writeset.WriteSet
	// Err is set by Apply when this item failed deterministically.
	Err error
}

// Tx is a local transaction. Statements run on the engine's local state at
// the transaction's snapshot (plus its own changes). At COMMIT the caller
// takes the WriteSet, hands the transaction over (HandOver) and submits the
// write set to the log; the write set then takes effect in log order, by
// Apply: on the other nodes as rows applied, on the origin either the same
// way (the SQLite engine rolls the local transaction back at HandOver) or
// by committing the local transaction itself at its position (the
// PostgreSQL engine: the origin does not do its work twice).
type Tx interface {
	// Snapshot returns the seqno of the state the transaction reads. It may
	// move forward before the first write when that is safe (nothing the
	// transaction read has changed since), so read it after the last Exec.
	Snapshot() uint64

	// Exec runs one SQL statement and reports its result to w. Parameters
	// are written $1, $2, ... and args[n-1] is the value of $n: nil, int64,
	// float64, string, []byte or bool, or a result.WireParam (an engine that
	// does not run PostgreSQL itself refuses it with 0A000). A Writer that
	// takes result.Wire values (result.WireWriter) may get them instead of
	// certa's. Schema changes, transaction control,
	// commands that would reach past replication (SQLite's ATTACH) and
	// writes to tables without a primary key are refused with a
	// *sqlerr.Error. After a failed statement the caller only rolls back
	// to a savepoint or ends the transaction (as PostgreSQL's 25P02
	// requires); what other calls do then is the engine's. After a
	// brute-force abort every call fails with 40001.
	Exec(ctx context.Context, sql string, w result.Writer, args ...any) error

	// Describe is Engine.Describe in the transaction: it sees the tables
	// the transaction's own schema statements made (ExecSchema). An
	// engine that runs PostgreSQL fails the transaction if the statement
	// does not parse, as PostgreSQL does.
	Describe(ctx context.Context, sql string) (params []result.Type, cols []result.Column, err error)

	// ExecSchema runs a schema statement (one that outside a transaction
	// runs on its own in total order, through CheckDDL and a DDL write set)
	// inside the transaction, and reports its result to w: its effect is
	// the transaction's, seen by its later statements and undone by
	// RollbackTo and Rollback. The write set then carries the statement in
	// its Changes, in order with the rows, and has Schema set, with the
	// tables the statement changed in Tables (or SchemaAll): the other
	// nodes run it at the transaction's position, and the origin commits
	// its own transaction there. Statements whose outcome could differ on
	// another node (one that also writes rows, or copies rows into a new
	// table) are refused with 0A000 and leave the transaction as it was.
	// An engine that cannot run schema statements in a transaction refuses
	// every one with 0A000, having run nothing.
	ExecSchema(ctx context.Context, sql string, w result.Writer) error

	// SetReadOnly makes the transaction read-only from now on (SQL SET
	// TRANSACTION READ ONLY): a later statement that would write a table,
	// a sequence or the schema, or lock rows, fails with 25006 and
	// PostgreSQL's message, having written nothing. What it wrote before
	// stays in its write set.
	SetReadOnly(ctx context.Context) error

	// TrackReads starts recording what the transaction reads, for a
	// serializable transaction (Reads). It is called once, before the
	// transaction's first statement.
	TrackReads(ctx context.Context) error

	// Reads returns what the transaction read (and wrote) since
	// TrackReads, however it read it (views, functions, triggers,
	// foreign-key checks), with tables by the names its write set's keys
	// give them: every row it saw or looked for is in a table of
	// Reads.Tables or covered by Reads.Keys or Reads.Ranges. Called after
	// WriteSet.
	Reads(ctx context.Context) (Reads, error)

	// Savepoint marks the transaction's current state (SQL SAVEPOINT). The
	// marks form a stack; n below numbers them from the oldest held, 1 up.
	Savepoint(ctx context.Context) error

	// RollbackTo returns the transaction to the state it had at mark n
	// (SQL ROLLBACK TO SAVEPOINT): changes made since are undone, mark n
	// stays, later marks are dropped. It may follow a failed Exec. After a
	// failure the transaction cannot recover from (a brute-force abort,
	// or a failed statement that ended it), it fails with that error.
	RollbackTo(ctx context.Context, n int) error

	// Release drops mark n and the later ones, keeping the changes (SQL
	// RELEASE SAVEPOINT).
	Release(ctx context.Context, n int) error

	// WriteSet returns what the transaction changed: Snapshot, Keys, Tables
	// and Changes are set; Origin and TxID are the caller's. Keys name every
	// row it inserted, deleted or updated (a key update: the old key and
	// the new), also one updated to the values it had, and every row it
	// locked (SELECT ... FOR UPDATE), as PostgreSQL's REPEATABLE READ counts
	// those as written; Changes may hold nothing for the last two. It
	// returns nil if the transaction changed and locked nothing that
	// replicates (writes to temporary tables are not captured): the
	// caller then commits it with CommitLocal.
	WriteSet() (*writeset.WriteSet, error)

	// ExecLocal runs a schema statement in the transaction if it
	// changes only the session's own objects (PostgreSQL's temporary
	// tables, their indexes, temporary views and sequences), which are
	// not replicated, and reports its result to w: it then returns
	// true. It returns false, having changed nothing and reported
	// nothing, for a statement that would change a replicated object:
	// the caller replicates it (ExecSchema, or CheckDDL on its own). A
	// statement whose objects PostgreSQL finds to be temporary decides,
	// never its text alone. A statement that changes nothing the engine
	// keeps (the SQLite engine's ALTER ... OWNER TO) may run here too.
	ExecLocal(ctx context.Context, sql string, w result.Writer) (bool, error)

	// CommitLocal commits a transaction whose WriteSet was nil: it
	// changed nothing that replicates, and what it did to the session's
	// own objects (temporary tables) stays. It is called instead of
	// HandOver; only Rollback follows. An engine without session-local
	// objects may roll back.
	CommitLocal(ctx context.Context) error

	// HandOver is called once, after WriteSet, when the write set is
	// submitted to the log with this TxID and this node as its Origin.
	// The engine either releases the transaction at once (what it holds,
	// such as SQLite's write lock, must not wait for the log), or keeps
	// it open, unchanged, so that Apply commits it at the write set's
	// position. After HandOver only Rollback is called.
	HandOver(txid uint64)

	// Prioritize lets the transaction's statements run up to d before
	// applying a replicated commit on this node aborts them (normally the
	// engine waits a short grace; ErrAbortedForApply). Meanwhile this
	// node applies nothing. For the retry of a statement aborted that way:
	// a long statement would otherwise never finish while other nodes write.
	Prioritize(d time.Duration)

	// Rollback ends the transaction, discarding its local changes and
	// releasing its connection and the write lock. It must always be
	// called, also after HandOver: once the write set's outcome is known
	// (or no longer awaited), and then it leaves a transaction Apply
	// committed as it is; one still held is rolled back, and Apply then
	// applies its write set's rows if it is certified. Safe to call more
	// than once.
	Rollback() error
}

// Reads is what a serializable transaction read, at the finest grain the
// engine could tell (writeset.WriteSet's read fields carry it).
type Reads struct {
	Tables []string            // read whole (or where the engine cannot tell which rows)
	Keys   []writeset.Key      // rows read by key, found or not
	Ranges []writeset.KeyRange // key ranges scanned (rows and the gaps between them)
}
