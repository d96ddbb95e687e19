package sqlite

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"zombiezen.com/go/sqlite"

	"certa/engine"
	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// maxMoveForward bounds how often one statement moves its transaction's
// snapshot forward. Once the transaction holds the write lock no apply can
// commit, so one move is always enough; the bound is a safety net.
const maxMoveForward = 3

// Tx is a local transaction (engine.Tx) on one pooled connection.
//
// Its owner calls its methods from one goroutine at a time; while it holds
// the write lock, other writers may concurrently park it (park.go) or the
// applier brute-force abort it (abort.go). mu serializes all use of the
// connection between them. Exec releases mu while it waits on the client
// (result.Writer calls), so a slow client never delays the applier.
// Rollback must always be called: it returns the connection to the pool.
type Tx struct {
	e     *Engine
	epoch uint64 // the engine's epoch at Begin: a Restore since fails the Tx

	mu          sync.Mutex
	conn        *conn        // nil once the Tx ended
	cur         *sqlite.Stmt // the statement Exec is running; an aborter finalizes it
	sess        *sqlite.Session
	sessSchema  int64 // the schema version sess was created at
	holdsLock   bool
	patient     atomic.Int64        // Prioritize's d, in nanoseconds
	reads       map[string]struct{} // lower-cased tables read by finished statements
	writes      map[string]struct{} // lower-cased tables written
	serial      *readSet            // what it read, if it tracks its reads (reads.go)
	seqs        seqLog              // values of sequences taken (sequence.go)
	rlog        stmtLog             // the statements run so far (moveforward.go)
	view        uint64              // seqno up to which what the Tx sees has been checked
	parked      bool                // the lock was given up (park.go)
	spill       []byte              // the changes set aside when parked; nil: re-run instead
	stmtWrote   bool                // the last statement wrote
	readOnly    bool                // SetReadOnly: writes and row locks are refused
	stmtChanges int                 // and changed this many rows
	stmtRows    int                 // and returned this many
	pending     pendingStmt         // the statement execOnce runs
	// unchecked is set when the Tx moved its snapshot forward without
	// checking what it had read (moveForward): view is then still the
	// snapshot it read at.
	unchecked bool
	locked    []writeset.Key // rows read FOR UPDATE (forupdate.go)
	lockedIn  []string       // their tables
	img       *rowImages     // the rows it wrote, in image mode (rowimage.go)
	keyRows   []writeset.Key // rows it wrote in image mode before leaving it
	keyRowsIn []string       // their tables
	// updatedKeys are the rows its UPDATEs touched, those
	// left as they were included (touched.go).
	updatedKeys []writeset.Key
	sps         []savepoint // the savepoint stack (savepoint.go)
	// usedSavepoints: the Tx ran a savepoint command; it never enters
	// image mode, and keeps going after a failed statement.
	usedSavepoints bool
	// fkWrites: the Tx wrote a table with foreign keys on either side:
	// WriteSet looks up parent rows in its state (fkeys.go). fkActions:
	// it wrote a table whose changes may run foreign-key actions; its
	// changes are never re-applied on its connection, where the actions
	// would run again: it parks to be re-run.
	fkWrites, fkActions bool
	// rowidWrites: the Tx wrote a table without a primary key; its
	// session does not outlive its SQLite transaction (rowid.go).
	rowidWrites bool
	// schema: the Tx ran schema statements (txschema.go); schemaHeld
	// says so to lock waiters.
	schema     *schemaChanges
	schemaHeld atomic.Bool
	// tempChanged: the Tx changed the session's temporary objects
	// (temp.go), which CommitLocal keeps; owner is the session whose
	// Tx it is (nil for the engine's own), which keeps its connection
	// once it holds temporary objects (session.go).
	tempChanged bool
	owner       *session

	snapshot atomic.Uint64 // the Tx's snapshot for certification

	lockHeld  atomic.Bool  // holdsLock, for lock-free reads by aborters
	busy      atomic.Bool  // in a call: not parkable
	cheapPark atomic.Bool  // parks to be re-run (park.go)
	idleAt    atomic.Int64 // when the last call ended (UnixNano)

	failed atomic.Pointer[sqlerr.Error] // once set, every call fails with it
	stopMu sync.Mutex
	stop   *stopper // interrupts the running Exec
}

var _ engine.Tx = (*Tx)(nil)

// Begin starts a local transaction reading the latest applied state. It
// waits for a free connection until ctx ends.
func (e *Engine) Begin(ctx context.Context) (engine.Tx, error) {
	tx, err := e.beginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return tx, nil
}

// beginTx is Begin for session s (nil: the engine's own work), trying
// again on another connection when the one it got had to be renewed
// (errConnRenewed): each try closes one, and a new one never has to be,
// so every idle connection may go (a table dropped had a trigger on each)
// before one is opened. A session's pinned connection is never renewed:
// it holds the session's temporary objects.
func (e *Engine) beginTx(ctx context.Context, s *session) (*Tx, error) {
	for try := 0; ; try++ {
		tx, err := e.newTx(ctx, s)
		if err != nil {
			return nil, err
		}
		tx.mu.Lock()
		err = tx.begin()
		if err == nil && tx.conn.lingering && (s == nil || tx.conn != s.pinned) {
			tx.conn.close()
			err = errConnRenewed
		}
		tx.mu.Unlock()
		if err == nil {
			return tx, nil
		}
		tx.Rollback()
		if !errors.Is(err, errConnRenewed) || try == maxRenewals {
			return nil, mapErr(err)
		}
	}
}

// newTx returns a Tx holding a pooled connection, or session s's pinned
// one, with no SQLite transaction begun yet.
func (e *Engine) newTx(ctx context.Context, s *session) (*Tx, error) {
	if e.closed.Load() {
		return nil, errClosed
	}
	// The epoch is read before the connection's snapshot is taken, so a
	// Restore that completes after it always makes the Tx fail.
	epoch := e.epoch.Load()
	c := (*conn)(nil)
	if s != nil {
		c = s.pinned
	}
	if c == nil {
		var err error
		if c, err = e.pool.get(ctx); err != nil {
			return nil, err
		}
	}
	tx := &Tx{e: e, epoch: epoch, conn: c, owner: s}
	c.user = sessionUser(ctx)
	c.lastValues = engine.SequenceValuesFrom(ctx)
	c.seqLog = &tx.seqs
	c.touched = &tx.updatedKeys
	c.advisory = &advisoryHold{locks: &e.advisory}
	return tx, nil
}

// sessionUser is the user of the session ctx is of (engine.WithUser);
// without one (the engine's own work), certa's.
func sessionUser(ctx context.Context) string {
	if u := engine.UserFrom(ctx); u != "" {
		return u
	}
	return "certa"
}

// begin starts a deferred transaction and pins its read snapshot by reading
// the applied seqno: in WAL mode the first read fixes what the transaction
// sees, and the seqno says which applied state that is.
func (tx *Tx) begin() error {
	c := tx.conn
	if err := c.exec("BEGIN"); err != nil {
		return err
	}
	var seqno, version int64
	ok := false
	err := c.execResult("SELECT seqno, (SELECT schema_version FROM pragma_schema_version) FROM _certa_meta",
		func(s *sqlite.Stmt) { seqno, version, ok = s.ColumnInt64(0), s.ColumnInt64(1), true })
	if err != nil {
		return err
	}
	if !ok {
		return errors.New("sqlite engine: _certa_meta has no row")
	}
	if version != c.touchVersion {
		// The connection's touch triggers (touched.go) are for another
		// schema: made again outside a transaction, which would undo
		// them when it rolls back.
		if err := c.rollback(); err != nil {
			return err
		}
		if _, err := c.syncTouchTriggers(); err != nil {
			return err
		}
		return tx.begin()
	}
	tx.snapshot.Store(uint64(seqno))
	tx.view = uint64(seqno)
	return nil
}

// Snapshot returns the seqno of the state the transaction reads.
func (tx *Tx) Snapshot() uint64 { return tx.snapshot.Load() }

// usable returns why the Tx cannot be used, or nil. tx.mu is held.
func (tx *Tx) usable() error {
	if tx.conn == nil {
		return errTxDone
	}
	if f := tx.failed.Load(); f != nil {
		return f
	}
	if tx.e.closed.Load() {
		return errClosed
	}
	if tx.e.epoch.Load() != tx.epoch {
		tx.fail(errRestored)
		return errRestored
	}
	return nil
}

// Rollback ends the transaction, discarding its changes, and returns its
// connection to the pool. Safe to call more than once.
func (tx *Tx) Rollback() error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if tx.conn == nil {
		return nil
	}
	broken := tx.endLocked()
	if tx.tempChanged && !broken {
		// Rolled back, its temporary objects are as before it.
		broken = tx.tempSchemaChanged() != nil
	}
	tx.conn.advisory.release()
	tx.conn.seqLog, tx.conn.touched, tx.conn.advisory = nil, nil, nil
	if tx.owner != nil {
		tx.owner.keep(tx.conn, broken)
	} else {
		tx.e.pool.put(tx.conn, broken)
	}
	tx.conn = nil
	tx.parked, tx.spill, tx.img, tx.sps, tx.readOnly = false, nil, nil, nil, false
	return nil
}

// SetReadOnly implements engine.Tx. Statements are checked before they
// run: COPY FROM and row locks by their text (Exec, execOnce), writes by
// what SQLite's authorizer saw when preparing them (execStmt).
func (tx *Tx) SetReadOnly(context.Context) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if err := tx.usable(); err != nil {
		return err
	}
	tx.readOnly = true
	return nil
}

// errReadOnly refuses what in a read-only transaction, in PostgreSQL's
// words.
func errReadOnly(what string) error {
	return sqlerr.New(sqlerr.ReadOnlyTransaction, "cannot execute %s in a read-only transaction", what)
}

// HandOver rolls the transaction back at once: its write set is applied
// in log order by Apply, on this node as on the others, and the write lock
// must not wait for the log.
func (tx *Tx) HandOver(uint64) { tx.Rollback() }

// Exec runs one SQL statement and reports its result to w.
func (tx *Tx) Exec(ctx context.Context, sql string, w result.Writer, args ...any) error {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if err := tx.usable(); err != nil {
		return err
	}
	sql = skipBlank(sql)
	if sql == "" {
		return tx.callWriter(nil, w.Empty)
	}
	tx.setBusy()
	defer tx.setIdle()
	done := tx.interruptOn(ctx)
	defer done()
	if cp, ok := pgparse.ParseCopy(sql); ok {
		if cp.From && tx.readOnly {
			return errReadOnly("COPY FROM")
		}
		return tx.copyStatement(ctx, cp, w)
	} else if firstKeyword(sql) == "COPY" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "COPY to or from a file or program on the server is not supported: copy from or to the client (COPY ... FROM STDIN, TO STDOUT; psql's \\copy)")
	}
	if tc, ok := pgparse.ParseTempCopy(sql); ok {
		return tx.execTempCopy(ctx, tc, w) // SELECT INTO TEMP (temp.go)
	}
	if isDiscardTemp(sql) {
		return tx.discardTemp(w)
	}
	if tag, tables, ok := pgparse.ParseVacuum(sql); ok {
		return tx.vacuum(tag, tables, w)
	}
	if mode, tables, ok := pgparse.ParseLockTable(sql); ok {
		return tx.lockTable(mode, tables, w)
	}
	var err error
	var logged *hashWriter
	if tx.rlog.active() {
		// Remember what the client sees, in case the snapshot must move
		// forward later (moveforward.go, park.go).
		logged = tx.rlog.newHasher(w)
		w = logged
	}
	if !tx.readOnly && (tx.img != nil || tx.canStartImages()) {
		if handled, err := tx.execImaged(ctx, sql, w, args); handled || err != nil {
			return tx.logged(sql, args, logged, err)
		}
	}
	if tx.parked {
		// The Tx gave up the lock while idle; it must see its own writes.
		if err := tx.unpark(ctx); err != nil {
			return tx.classify(err)
		}
	}
	if tx.unchecked {
		if tx.isKeyWrite(sql) {
			err = tx.certifyKeyRows(ctx, sql, args)
		} else {
			err = tx.checkReads(ctx)
		}
		if err != nil {
			return tx.classify(err)
		}
	}
	for attempt := 0; ; attempt++ {
		err = tx.execOnce(ctx, sql, w, args)
		if err != nil && attempt < maxMoveForward && sqlite.ErrCode(err) == sqlite.ResultBusySnapshot {
			// Our snapshot went stale before our first write: an apply
			// committed since. Move forward if what we read is unchanged.
			keyWrite := tx.conn.keyWrite(tx.pending.sql, tx.pending.rec)
			if err = tx.moveForward(ctx, keyWrite); err == nil && tx.unchecked {
				err = tx.certifyKeyRows(ctx, sql, args)
			}
			if err == nil {
				continue
			}
		}
		break
	}
	if tx.unchecked && tx.e.hist.changed(tx.view, tx.writes) {
		// The statement was a key write run on a newer state than the
		// snapshot. A key free in the snapshot but taken since fails a
		// constraint, and a row there but deleted since is not found:
		// either way, the write conflict certification would have found
		// (a key write that changed its row certifies it).
		if err != nil && sqlite.ErrCode(err).ToPrimary() == sqlite.ResultConstraint ||
			err == nil && tx.stmtWrote && tx.stmtChanges == 0 {
			return tx.failNow(errWriteConflict)
		}
	}
	if sqlite.ErrCode(err) == sqlite.ResultConstraintForeignKey &&
		tx.e.hist.changed(tx.snapshot.Load(), tx.pending.rec.tables()) {
		// The statement ran on a newer state than the snapshot (SQLite
		// writes only there), and a table its foreign-key check read was
		// changed since: the parent deleted or the child inserted by a
		// concurrent commit. PostgreSQL reports that as a serialization
		// failure too.
		return tx.failNow(errWriteConflict)
	}
	return tx.logged(sql, args, logged, err)
}

// logged ends Exec: it logs the statement the client saw succeed (logged is
// its result's hash, nil if the log is off) and classifies err.
func (tx *Tx) logged(sql string, args []any, logged *hashWriter, err error) error {
	switch {
	case err != nil:
		tx.rlog.stop() // the client saw an error we could not compare
	case logged != nil:
		tx.rlog.add(sql, args, logged, tx.stmtWrote)
	}
	err = tx.classify(err)
	if err != nil {
		tx.checkAfterError()
	}
	return err
}

// pendingStmt is the statement execOnce runs and its authorizer record.
type pendingStmt struct {
	sql string
	rec record
}

// writerError marks an error returned by the result.Writer: it is passed on
// as it is (the client went away; it is not the statement's fault).
type writerError struct{ err error }

func (e writerError) Error() string { return e.err.Error() }

// classify turns an Exec error into what the client sees.
func (tx *Tx) classify(err error) error {
	if err == nil {
		return nil
	}
	var we writerError
	if errors.As(err, &we) {
		return we.err
	}
	if f := tx.failed.Load(); f != nil {
		return f // aborted: the interrupt (or whatever broke) is a consequence
	}
	if errors.Is(err, errLockTimeout) {
		return errLockWait
	}
	return mapErr(err)
}

// callWriter calls a result.Writer method without holding tx.mu, so that an
// aborter need not wait for the client. If stmt is not nil and was finalized
// by an aborter meanwhile, it returns the abort error.
func (tx *Tx) callWriter(stmt *sqlite.Stmt, fn func() error) error {
	tx.mu.Unlock()
	err := fn()
	tx.mu.Lock()
	if err != nil {
		return writerError{err}
	}
	if stmt != nil && tx.cur != stmt {
		if f := tx.failed.Load(); f != nil {
			return f
		}
		return errAborted
	}
	return nil
}

// execOnce prepares and runs sql once, after the locking SELECTs nested
// in it (forupdate.go).
func (tx *Tx) execOnce(ctx context.Context, sql string, w result.Writer, args []any) error {
	nested, err := nestedLocks(sql)
	if err != nil {
		return err
	}
	if tx.readOnly {
		if mode, ok := lockingMode(sql); ok {
			return errReadOnly("SELECT " + mode)
		}
		if len(nested) > 0 {
			return errReadOnly("SELECT FOR UPDATE")
		}
	}
	if len(nested) == 0 {
		return tx.execStmt(ctx, sql, w, args)
	}
	return tx.execLockingNested(ctx, sql, nested, w, args)
}

// execStmt prepares and runs sql once.
func (tx *Tx) execStmt(ctx context.Context, sql string, w result.Writer, args []any) error {
	c := tx.conn
	if req, ok := parseLocking(sql); ok {
		sql = req.sql
		if req.table != "" && c.isTemp(req.table, "table") {
			// The session's own rows: no other session sees them.
		} else if req.table != "" {
			if tx.tempChanged {
				return errTempMix()
			}
			rewritten, ti, k, err := c.lockedSelect(req)
			if err != nil {
				return err
			}
			sql = rewritten
			w = &lockWriter{Writer: w, k: k, table: ti.name, keys: &tx.locked}
			tx.lockedIn = append(tx.lockedIn, ti.name)
		}
	}
	stmt, rec, tail, err := c.prepareCached(sql)
	if err != nil {
		return err
	}
	tx.cur = stmt
	defer tx.finishStatement()
	if !isBlank(tail) {
		return errOneStatement()
	}
	if err := bindArgs(stmt, args); err != nil {
		return err
	}
	if err := checkNumericArgs(rec.numericParams, args); err != nil {
		return err
	}
	if tx.readOnly && (len(rec.writes) > 0 || rec.nextval) {
		if rec.nextval {
			return errReadOnly("nextval()")
		}
		return errReadOnly(firstKeyword(sql))
	}
	if rec.tempWrites && (len(rec.writes) > 0 || tx.changesReplicated()) || len(rec.writes) > 0 && tx.tempChanged {
		return errTempMix()
	}
	if rec.tempWrites {
		tx.tempChanged = true
		tx.rlog.stop() // never run again: its changes are kept, not replicated
	}
	if len(rec.writes) > 0 {
		if err := tx.prepareWrite(ctx, rec.writes); err != nil {
			return err
		}
		if tx.writes == nil {
			tx.writes = make(map[string]struct{})
		}
		for _, t := range lowerAll(rec.writes) {
			tx.writes[t] = struct{}{}
		}
	}
	tx.stmtWrote = len(rec.writes) > 0
	tx.pending = pendingStmt{sql, rec}
	c.takeFuncErr() // none of an earlier statement's
	err = tx.run(stmt, sql, &rec, w)
	fe := c.funcErr
	if runsAgain(err, fe) {
		c.giveBackValues(tx.e.seqs, tx.stmtRows)
	}
	if fe := c.funcError(sql); fe != nil && sqlite.ErrCode(err) != sqlite.ResultBusySnapshot {
		return fe // the statement failed, whatever SQLite said (registerNextval)
	}
	if sqlite.ErrCode(err) == sqlite.ResultConstraintForeignKey {
		err = errFKStatement(err, &rec, c)
	}
	if sqlite.ErrCode(err) != sqlite.ResultBusySnapshot {
		// A statement that will be re-run on a newer snapshot has read
		// nothing yet that matters.
		tx.addReads(rec.reads)
		tx.recordReads(&rec, args)
	}
	return err
}

// finishStatement finalizes the running statement, unless an aborter did.
func (tx *Tx) finishStatement() {
	if tx.cur != nil {
		tx.conn.release(tx.cur)
		tx.cur = nil
		tx.conn.endStatement()
	}
}

func (tx *Tx) addReads(tables []string) {
	if len(tables) == 0 {
		return
	}
	if tx.reads == nil {
		tx.reads = make(map[string]struct{})
	}
	for _, t := range lowerAll(tables) {
		tx.reads[t] = struct{}{}
	}
}

// prepareWrite readies the Tx for a statement that writes tables: they must
// have keys that certification can follow (or the rows could not be
// replicated: keys.go, rowid.go), the Tx takes the write lock, and a
// session records its changes from now on.
func (tx *Tx) prepareWrite(ctx context.Context, tables []string) error {
	c := tx.conn // its schema cache is fresh: prepareCached refreshed it
	for _, t := range tables {
		ti, err := c.table(t)
		if err != nil {
			return err
		}
		if ti.rowid != "" {
			tx.rowidWrites = true
		}
		if ti.keyProblem != "" {
			return errKeyProblem(ti.keyProblem)
		}
		if ti.hasForeignKeys() {
			tx.fkWrites = true
		}
		if ti.hasActions() {
			tx.fkActions = true
		}
	}
	if !tx.holdsLock {
		if err := tx.takeLock(ctx); err != nil {
			return err
		}
	}
	if tx.img != nil {
		return nil // the images record the changes
	}
	return tx.ensureSession()
}

// takeLock takes the write lock as a local writer. tx.mu is held.
func (tx *Tx) takeLock(ctx context.Context) error {
	if err := tx.e.lock.lock(ctx, tx, tx.e.cfg.LockTimeout, localParkIdle); err != nil {
		return err
	}
	tx.holdsLock = true
	tx.lockHeld.Store(true)
	return tx.usable() // restored or closed while we waited
}

// ensureSession starts recording the Tx's changes, unless it does already
// in a session made for the current schema (a session kept while parked
// knows the tables as they were; see rollbackLocked). The connection's
// schema version must be fresh (refreshSchema). tx.mu is held.
func (tx *Tx) ensureSession() error {
	c := tx.conn
	if tx.sess != nil && tx.sessSchema == c.schemaVersion {
		return nil
	}
	if tx.sess != nil {
		tx.sess.Delete()
		tx.sess = nil
	}
	s, err := newSession(c)
	if err != nil {
		return err
	}
	tx.sess, tx.sessSchema = s, c.schemaVersion
	return nil
}

// Describe is the engine's, or, once the Tx changed the schema, its own
// connection's, which sees the changes.
func (tx *Tx) Describe(ctx context.Context, sql string) ([]result.Type, []result.Column, error) {
	tx.mu.Lock()
	if tx.usable() != nil || tx.schema == nil && len(tx.conn.temps) == 0 {
		tx.mu.Unlock()
		return tx.e.Describe(ctx, sql)
	}
	defer tx.mu.Unlock()
	if tx.parked {
		// Parked while idle, its schema changes are set aside: described
		// now, a statement would not see the columns and tables they made
		// (Flyway's UPDATE of a column its migration had just added: 42703).
		if err := tx.unpark(ctx); err != nil {
			return nil, nil, tx.classify(err)
		}
	}
	return tx.conn.describe(sql)
}
