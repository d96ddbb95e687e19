package replica

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"certa/engine"
	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
	"certa/writeset"
)

// Session runs one client connection's statements: transaction blocks,
// session settings, DDL in total order, and local execution with commit
// through the cluster. It is used by one goroutine (the connection's).
type Session struct {
	node *Node
	es   engine.Session // the session's use of the engine: where its own objects (temporary tables) are

	tx      engine.Tx // open engine transaction, or nil
	inBlock bool      // inside BEGIN ... COMMIT
	failed  bool      // the block hit an error: only ROLLBACK/COMMIT end it, or ROLLBACK TO a savepoint
	// savepoints are the names of the block's savepoints, oldest first;
	// savepoints[i] is the engine Tx's mark i+1.
	savepoints []string

	// seqValues are what currval and lastval return, on an engine that
	// does not keep them itself (engine.SequenceValues).
	seqValues engine.SequenceValues

	sessionSettings                // what SET changes (settings.go)
	block           *blockSettings // settings to go back to at ROLLBACK; nil outside a block
	lastCommit      uint64         // seqno of this session's last commit
	// reported are changes of parameters the client is told about
	// (ParameterStatus), not yet taken by TakeReported.
	reported [][2]string
	// pgStartup are the PostgreSQL parameters of the client's startup
	// packet, as PostgreSQL read them: RESET returns to these, not to the
	// server's defaults. pgDefaults are the server's defaults of reported
	// parameters (reportedName) the session set, learnt at the first SET,
	// for telling the client when one comes back.
	pgStartup, pgDefaults map[string]string
	// parsed caches Execute's parsing of the statements the client
	// prepared: drivers execute the same few again and again.
	parsed map[string]statement
	user   string // the client's user (SetUser)
}

// maxParsed bounds Session.parsed; the cache starts over when full.
const maxParsed = 256

// NewSession opens a session for a client connection. Its signature fits
// pgwire.Backend through an adapter in cmd.
func (n *Node) NewSession() *Session {
	return &Session{node: n, es: n.engine.NewSession(), sessionSettings: sessionSettings{consistency: "local", settings: map[string]string{}, statementTimeout: n.cfg.StatementTimeout}}
}

// RawParams reports whether statement parameters should reach the engine
// as the client sent them (result.WireParam): the engine runs PostgreSQL,
// which reads them itself (pgwire.RawParams).
func (s *Session) RawParams() bool { return s.node.engine.RunsPostgreSQL() }

// TxStatus returns 'I', 'T' or 'E' for ReadyForQuery.
func (s *Session) TxStatus() byte {
	switch {
	case s.failed:
		return 'E'
	case s.inBlock:
		return 'T'
	default:
		return 'I'
	}
}

// Close rolls back any open transaction and ends the engine session
// (its temporary tables are dropped).
func (s *Session) Close() {
	s.endTx()
	s.es.Close()
}

// endTx ends the session's transaction block, if any, rolling it back:
// its changes and its settings.
func (s *Session) endTx() {
	if s.tx != nil {
		s.tx.Rollback()
		s.tx = nil
	}
	s.rollbackSettings()
	s.inBlock, s.failed, s.savepoints = false, false, nil
}

// Query runs the statements of sql in order; the first error stops the
// rest. As in PostgreSQL, statements of one query outside a block run in
// implicit blocks (queryImplicit); certa runs them one by one instead
// when one is a schema change, which is executed on its own at its
// position in the log.
func (s *Session) Query(ctx context.Context, sql string, w result.Writer) error {
	stmts := splitStatements(sql)
	if len(stmts) == 0 {
		return w.Empty()
	}
	if len(stmts) > 1 {
		// PostgreSQL parses the whole string first: a statement it
		// cannot parse runs none of them.
		if err := pgparse.CheckSyntax(sql); err != nil {
			if s.inBlock {
				s.failBlock()
			}
			return err
		}
	}
	if len(stmts) > 1 && !changesSchema(stmts) {
		return s.queryImplicit(ctx, sql, stmts, w)
	}
	for _, st := range stmts {
		if err := s.run(ctx, st, w); err != nil {
			if s.inBlock {
				s.failBlock()
			}
			return inQuery(err, sql, st)
		}
	}
	return nil
}

// warn sends the client a WARNING, as PostgreSQL does for transaction
// control that has nothing to do (sqlerr.WithNotices).
func warn(ctx context.Context, code, msg string) {
	if send := sqlerr.NoticesFrom(ctx); send != nil {
		send(&sqlerr.Error{Severity: "WARNING", Code: code, Message: msg})
	}
}

// inQuery returns err of statement st of the query string sql with its
// position (in characters, from 1) counted in sql, as the client sent it.
func inQuery(err error, sql string, st statement) error {
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Position == 0 {
		return err
	}
	c := *e
	c.Position += int32(utf8.RuneCountInString(sql[:st.at]))
	if e.Code == sqlerr.SyntaxError {
		// The statement went to the engine cut from its query string,
		// without its semicolon ("at end of input"): PostgreSQL's parser
		// says the error as PostgreSQL, which saw the whole string, says
		// it. The engine's stays where it says the same (its source
		// location is the server's own).
		var whole *sqlerr.Error
		if errors.As(pgparse.CheckSyntax(sql), &whole) && (whole.Message != c.Message || whole.Position != c.Position) {
			return whole
		}
	}
	return &c
}

// changesSchema reports whether one of stmts is a schema change.
func changesSchema(stmts []statement) bool {
	for _, st := range stmts {
		if st.kind == kindDDL {
			return true
		}
	}
	return false
}

// queryImplicit runs the statements of a query that changes no schema as
// PostgreSQL does. Outside a block, the statements up to a COMMIT or
// ROLLBACK, or to the query's end, are one transaction, an implicit
// block, committed at its end (not retried: it is several statements)
// and rolled back whole when one fails. BEGIN makes it the explicit block
// it starts, which goes on past the query; COMMIT or ROLLBACK ends it
// with a warning that there is no transaction in progress; AND CHAIN and
// savepoints fail in it (25P01). An error stops the query.
func (s *Session) queryImplicit(ctx context.Context, sql string, stmts []statement, w result.Writer) error {
	implicit := false
	defer func() {
		if implicit {
			s.endTx()
		}
	}()
	for _, st := range stmts {
		if !s.inBlock && st.kind != kindBegin && st.kind != kindCommit && st.kind != kindRollback {
			s.inBlock, implicit = true, true
			s.beginSettings()
			s.beginModes(pgparse.TxModes{}, false)
		}
		var err error
		if implicit {
			err = s.runImplicit(ctx, st, w, &implicit)
		} else {
			err = s.run(ctx, st, w)
		}
		if err != nil {
			if !implicit && s.inBlock {
				s.failBlock()
			}
			return inQuery(err, sql, st)
		}
	}
	if !implicit {
		return nil
	}
	implicit = false
	defer s.endTx()
	if tx := s.tx; tx != nil {
		s.tx = nil
		if err := s.commitTx(ctx, tx, s.modes.serializable()); err != nil {
			return err
		}
	}
	s.commitSettings()
	return nil
}

// runImplicit runs st inside an implicit block (queryImplicit), which
// transaction control ends (*implicit false) or makes explicit.
func (s *Session) runImplicit(ctx context.Context, st statement, w result.Writer, implicit *bool) error {
	switch st.kind {
	case kindBegin:
		// Its modes first: one that fails rolls the implicit block back.
		if m, ok := pgparse.TransactionModes(st.sql); ok {
			if m.Isolation != "" {
				if err := s.setTxIsolation(m.Isolation); err != nil {
					return err
				}
			}
			if m.ReadOnly != nil {
				if err := s.setTxReadOnly(ctx, *m.ReadOnly); err != nil {
					return err
				}
			}
		}
		*implicit = false // the block goes on, as the one BEGIN starts
		return w.Complete("BEGIN")
	case kindCommit, kindRollback:
		if chained(st.words) {
			return sqlerr.New(sqlerr.NoActiveTransaction, "%s can only be used in transaction blocks", strings.Join(st.words, " "))
		}
		warn(ctx, sqlerr.NoActiveTransaction, "there is no transaction in progress")
		*implicit = false
		if st.kind == kindCommit {
			return s.commitBlock(ctx, w)
		}
		s.endTx()
		return w.Complete("ROLLBACK")
	case kindSavepoint:
		cmd, _, err := parseSavepoint(st.sql)
		if err != nil {
			return err
		}
		return sqlerr.New(sqlerr.NoActiveTransaction, "%s can only be used in transaction blocks", cmd)
	}
	return s.run(ctx, st, w)
}

// Execute runs one statement with parameters ($1 is args[0]), as the
// extended query protocol's Execute: in the open transaction block if
// there is one, else as its own transaction.
func (s *Session) Execute(ctx context.Context, sql string, args []any, w result.Writer) error {
	st, ok := s.parsed[sql]
	if !ok {
		var err error
		if st, err = oneStatement(sql); err != nil {
			return err
		}
		if len(s.parsed) >= maxParsed || s.parsed == nil {
			s.parsed = make(map[string]statement)
		}
		s.parsed[sql] = st
	}
	if st.kind == kindEmpty {
		return w.Empty()
	}
	st.args = args
	if err := s.run(ctx, st, w); err != nil {
		if s.inBlock {
			s.failBlock()
		}
		return err
	}
	return nil
}

// Describe returns the types of one statement's parameters and result
// columns without running it (nil columns: no result set), as the extended
// query protocol's Parse and Describe need. A column whose type shows only
// when the statement runs is result.Unknown.
func (s *Session) Describe(ctx context.Context, sql string) (params []result.Type, cols []result.Column, err error) {
	st, err := oneStatement(sql)
	if err != nil {
		return nil, nil, err
	}
	if s.failed && st.kind != kindCommit && st.kind != kindRollback && st.kind != kindSavepoint && st.kind != kindEmpty {
		return nil, nil, errInFailedBlock
	}
	defer func() {
		if sqlerr.Code(err) == sqlerr.SyntaxError {
			// Said of the statement as the client sent it, not as cut
			// (a syntax error "at end of input" is after its spaces).
			var whole *sqlerr.Error
			if errors.As(pgparse.CheckSyntax(sql), &whole) {
				err = whole
			}
		}
	}()
	switch s.kindOf(st) {
	case kindOther:
		if s.tx != nil {
			// In the block's transaction, which sees its own schema
			// changes (a table it created); a statement PostgreSQL
			// cannot parse fails the block, as it does in PostgreSQL.
			params, cols, err = s.tx.Describe(ctx, st.sql)
			if err != nil && s.node.engine.RunsPostgreSQL() {
				s.failBlock()
			}
			return params, cols, err
		}
		params, cols, err = s.es.Describe(s.engineCtx(ctx), st.sql)
		if err != nil && !s.inBlock && (s.consistency == "sync" || s.waitFor > 0) {
			// What the statement names may be committed but not applied
			// here yet (a table created on another node): a session that
			// asked to see it waits, as its statements do, and tries again.
			if werr := s.readWait(ctx); werr != nil {
				return nil, nil, werr
			}
			return s.es.Describe(s.engineCtx(ctx), st.sql)
		}
		return params, cols, err
	case kindCatalog:
		return s.describeCatalog(ctx, st)
	case kindShow:
		if len(st.words) < 2 {
			return nil, nil, sqlerr.New(sqlerr.SyntaxError, "syntax error in SHOW: expected a parameter name")
		}
		return nil, []result.Column{{Name: showColumn(showName(st)), Type: result.Text}}, nil
	case kindSetConfig:
		sc, _ := pgparse.ParseSetConfig(st.sql)
		var params []result.Type
		for i, n := range sc.Params {
			for len(params) < n {
				params = append(params, result.Unknown)
			}
			if n > 0 {
				params[n-1] = []result.Type{result.Text, result.Text, result.Bool}[i]
			}
		}
		return params, []result.Column{{Name: sc.Column, Type: result.Text}}, nil
	}
	return nil, nil, nil
}

// describeCatalog describes a catalog query by running it with NULL
// parameters (catalog queries are cheap and have no effects): its
// parameters are text.
func (s *Session) describeCatalog(ctx context.Context, st statement) ([]result.Type, []result.Column, error) {
	n := 0
	for _, m := range paramRef.FindAllStringSubmatch(st.sql, -1) {
		if k, err := strconv.Atoi(m[1]); err == nil && k > n {
			n = k
		}
	}
	buf := &result.Buffer{}
	if err := s.es.Catalog(ctx, st.sql, buf, make([]any, n)...); err != nil {
		return nil, nil, err
	}
	return make([]result.Type, n), buf.Cols, nil
}

var paramRef = regexp.MustCompile(`\$(\d+)`)

// oneStatement parses sql as at most one statement.
func oneStatement(sql string) (statement, error) {
	stmts := splitStatements(sql)
	switch len(stmts) {
	case 0:
		return statement{kind: kindEmpty}, nil
	case 1:
		return stmts[0], nil
	}
	return statement{}, sqlerr.New(sqlerr.SyntaxError, "cannot insert multiple commands into a prepared statement")
}

// failBlock marks the block failed. Its transaction is rolled back at once
// unless a savepoint can still bring it back (ROLLBACK TO).
func (s *Session) failBlock() {
	if s.tx != nil && len(s.savepoints) == 0 {
		s.tx.Rollback()
		s.tx = nil
	}
	s.failed = true
}

var errInFailedBlock = sqlerr.New(sqlerr.InFailedTransaction,
	"current transaction is aborted, commands ignored until end of transaction block")

func (s *Session) run(ctx context.Context, st statement, w result.Writer) error {
	if isDiscardAll(st) && s.node.engine.RunsPostgreSQL() {
		return s.discardAll(ctx, w)
	}
	err := s.runStatement(ctx, st, w)
	if err == nil && discardsSequences(st) {
		// The session's values are its backend's sequence state.
		s.seqValues = engine.SequenceValues{}
	}
	return err
}

// discardAllSteps are what DISCARD ALL does, in PostgreSQL's order (its
// documentation's): each as the session runs it, for the session's state
// lies in certa (settings, sequence values) and on its backend.
var discardAllSteps = []string{"CLOSE ALL", "SET SESSION AUTHORIZATION DEFAULT", "RESET ALL", "DEALLOCATE ALL",
	"UNLISTEN *", "SELECT pg_catalog.pg_advisory_unlock_all()", "DISCARD PLANS", "DISCARD TEMP", "DISCARD SEQUENCES"}

// discardAll runs DISCARD ALL, which connection poolers send between
// clients: outside a block only, as in PostgreSQL.
func (s *Session) discardAll(ctx context.Context, w result.Writer) error {
	if s.inBlock {
		if s.failed {
			return errInFailedBlock
		}
		return sqlerr.New(sqlerr.ActiveTransaction, "DISCARD ALL cannot run inside a transaction block")
	}
	for _, sql := range discardAllSteps {
		if err := s.run(ctx, newStatement(sql), result.Discard); err != nil {
			return err
		}
	}
	return w.Complete("DISCARD ALL")
}

// isDiscardAll reports whether st is DISCARD ALL.
func isDiscardAll(st statement) bool {
	return len(st.words) == 2 && strings.EqualFold(st.words[0], "DISCARD") && strings.EqualFold(st.words[1], "ALL")
}

// discardsSequences reports whether st is DISCARD SEQUENCES, which
// forgets what currval and lastval answer (DISCARD ALL runs it as a step).
func discardsSequences(st statement) bool {
	return len(st.words) == 2 && strings.EqualFold(st.words[0], "DISCARD") && strings.EqualFold(st.words[1], "SEQUENCES")
}

func (s *Session) runStatement(ctx context.Context, st statement, w result.Writer) error {
	switch st.kind {
	case kindBegin:
		if s.failed {
			return errInFailedBlock
		}
		if s.inBlock {
			warn(ctx, sqlerr.ActiveTransaction, "there is already a transaction in progress")
		} else {
			s.inBlock = true
			s.beginSettings()
			var m pgparse.TxModes
			ok := false
			if len(st.words) > 1 {
				m, ok = pgparse.TransactionModes(st.sql)
			}
			s.beginModes(m, ok)
		}
		return w.Complete("BEGIN")
	case kindCommit, kindRollback:
		chain := chained(st.words)
		if !s.inBlock {
			if chain {
				return sqlerr.New(sqlerr.NoActiveTransaction, "%s can only be used in transaction blocks", strings.Join(st.words, " "))
			}
			warn(ctx, sqlerr.NoActiveTransaction, "there is no transaction in progress")
		}
		modes := s.modes
		if st.kind == kindCommit {
			if err := s.commitBlock(ctx, w); err != nil {
				return err
			}
		} else {
			s.endTx()
			if err := w.Complete("ROLLBACK"); err != nil {
				return err
			}
		}
		if chain {
			// As PostgreSQL's AND CHAIN: a new block, with the modes of
			// the one that ended, unless its COMMIT failed.
			s.inBlock = true
			s.beginSettings()
			s.modes = modes
		}
		return nil
	case kindRefused:
		if st.words[0] == "PREPARE" && s.inBlock {
			// As in PostgreSQL, a PREPARE TRANSACTION that fails becomes
			// a ROLLBACK: the block ends (an aborted one without error).
			failed := s.failed
			s.endTx()
			if failed {
				return w.Complete("ROLLBACK")
			}
		}
		return sqlerr.New(sqlerr.FeatureNotSupported, "%s is not supported by certa", strings.Join(st.words, " "))
	case kindSavepoint:
		return s.savepoint(ctx, st, w)
	}
	if s.failed {
		return errInFailedBlock
	}
	if s.inBlock && !s.node.engine.RunsPostgreSQL() && len(st.words) > 0 &&
		(st.words[0] == "VACUUM" || strings.Contains(strings.ToUpper(st.sql), "CONCURRENTLY")) {
		// Over PostgreSQL, PostgreSQL refuses these itself.
		if cmd := pgparse.OutsideBlockOnly(st.sql); cmd != "" {
			return sqlerr.New(sqlerr.ActiveTransaction, "%s cannot run inside a transaction block", cmd)
		}
	}
	st.sql = s.withModesShown(st.sql)
	switch s.kindOf(st) {
	case kindSet:
		return s.set(ctx, st, w)
	case kindShow:
		return s.show(st, w)
	case kindSetConfig:
		return s.setConfig(st, w)
	case kindDDL:
		return s.ddl(ctx, st, w)
	case kindCatalog:
		ctx, cancel := s.statementContext(ctx)
		defer cancel()
		if err := s.readWait(ctx); err != nil {
			return err
		}
		return s.es.Catalog(ctx, st.sql, w, st.args...)
	}
	if s.inBlock {
		if err := s.beginIfNeeded(ctx); err != nil {
			return err
		}
		ctx, cancel := s.statementContext(ctx)
		defer cancel()
		return s.tx.Exec(ctx, st.sql, w, st.args...)
	}
	return s.autocommit(ctx, st, w)
}

// kindOf returns st's kind for this node's engine: over PostgreSQL a
// catalog query, and SHOW of a parameter not certa's, are ordinary
// statements.
func (s *Session) kindOf(st statement) kind {
	switch {
	case (st.kind == kindCatalog || st.kind == kindSetConfig) && s.node.engine.RunsPostgreSQL():
		return kindOther
	// The session answers SHOW of the transaction's characteristics
	// (txModes): its reads outside a block run in READ ONLY
	// transactions, at REPEATABLE READ.
	case st.kind == kindShow && len(st.words) > 1 && !strings.HasPrefix(strings.ToLower(st.words[1]), "certa.") &&
		s.node.engine.RunsPostgreSQL() && !slices.Contains(shownModes, showName(st)):
		return kindOther
	case st.kind == kindSet && len(st.words) > 1 && st.words[1] == "CONSTRAINTS" && s.node.engine.RunsPostgreSQL() &&
		pgparse.SetsConstraints(st.sql):
		// It runs in the transaction: IMMEDIATE checks the deferred
		// constraints at once, as in PostgreSQL.
		return kindOther
	}
	return st.kind
}

// engineCtx returns ctx carrying the session's PostgreSQL settings for
// the engine (engine.WithSettings).
func (s *Session) engineCtx(ctx context.Context) context.Context {
	return engine.WithSequenceValues(engine.WithUser(engine.WithSettings(ctx, s.pg), s.user), &s.seqValues)
}

// SetUser names the user the client authenticated as (CURRENT_USER).
func (s *Session) SetUser(name string) { s.user = name }

// beginIfNeeded starts the engine transaction of a block at its first
// statement, after the session's read-consistency wait.
func (s *Session) beginIfNeeded(ctx context.Context) error {
	if s.tx != nil {
		return nil
	}
	ctx, cancel := s.statementContext(ctx)
	defer cancel()
	if err := s.readWait(ctx); err != nil {
		return err
	}
	tx, err := s.es.Begin(s.engineCtx(ctx))
	if err != nil {
		return err
	}
	if err := s.readOnlyTx(ctx, tx); err != nil {
		tx.Rollback()
		return err
	}
	if err := s.trackReads(ctx, tx); err != nil {
		tx.Rollback()
		return err
	}
	s.tx = tx
	return nil
}

func (s *Session) readWait(ctx context.Context) error {
	if s.waitFor > 0 {
		if err := s.node.WaitApplied(ctx, s.waitFor); err != nil {
			return err
		}
	}
	if s.consistency == "sync" {
		return s.node.WaitSync(ctx)
	}
	return nil
}

// autocommit runs one statement as its own transaction. A query that only
// reads runs as such (Engine.Read), its rows streamed. Any other statement
// runs in a Tx and its results are held back until it has committed, so a
// client never sees a row count for a write that then failed; one that lost
// certification is re-executed on a fresh snapshot (Galera's
// retry_autocommit), which is what the client would do.
func (s *Session) autocommit(ctx context.Context, st statement, w result.Writer) error {
	execCtx, cancel := s.statementContext(ctx)
	defer cancel()
	if err := s.readWait(execCtx); err != nil {
		return err
	}
	if err := s.es.Read(s.engineCtx(execCtx), st.sql, w, st.args...); !errors.Is(err, engine.ErrNotReadOnly) {
		return err
	}
	var patience time.Duration
	for conflicts, waits := 0, 0; ; {
		buf := result.BufferFor(w)
		err := s.runOnce(ctx, execCtx, st, buf, patience)
		if err == nil {
			return buf.Replay(w)
		}
		if sqlerr.Code(err) != sqlerr.SerializationFailure {
			return err
		}
		// A statement that needed values of a sequence this node had none
		// of yet waits for them (they are being reserved) before it runs
		// again. That is no conflict: a bulk INSERT that runs out of
		// values several times (each block larger) would otherwise use up
		// its retries, with nobody else writing.
		if errors.Is(err, engine.ErrNoSequenceValues) {
			if waits >= maxSequenceWaits || !s.node.waitSequenceValues(execCtx, err) {
				return err
			}
			waits++
			continue
		}
		if conflicts >= s.node.cfg.AutocommitRetries {
			return err
		}
		conflicts++
		// A statement the applier aborted runs again with priority, or a
		// long one would never finish while other nodes write.
		if errors.Is(err, engine.ErrAbortedForApply) {
			patience = abortedStatementPatience
		}
	}
}

// maxSequenceWaits bounds how often one autocommit statement waits for
// values of a sequence and runs again: the engine makes each block of a
// sequence that ran out larger (the embedded engine four times, up to
// 2^20 values), so a statement that needs many finds them in a few.
const maxSequenceWaits = 10

// abortedStatementPatience is how long a statement re-run after the
// applier aborted it may hold up applying on this node (engine.Tx's
// Prioritize). A bulk INSERT ... SELECT that takes seconds was otherwise
// aborted at each try while other nodes wrote, and never ran.
const abortedStatementPatience = 10 * time.Second

// runOnce runs st in its own transaction: execution under execCtx (the
// statement timeout), the commit under ctx; the applier waits up to
// patience for it (0: the engine's usual grace).
func (s *Session) runOnce(ctx, execCtx context.Context, st statement, w result.Writer, patience time.Duration) error {
	tx, err := s.es.Begin(s.engineCtx(execCtx))
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if err := s.readOnlyTx(execCtx, tx); err != nil {
		return err
	}
	if err := s.trackReads(execCtx, tx); err != nil {
		return err
	}
	if patience > 0 {
		tx.Prioritize(patience)
	}
	if st.kind == kindDDL {
		// CheckDDL's engine.ErrRunAsTransaction: a block's schema
		// statement, in a transaction of its own.
		err = tx.ExecSchema(execCtx, st.sql, w)
	} else {
		err = tx.Exec(execCtx, st.sql, w, st.args...)
	}
	if err != nil {
		return err
	}
	return s.commitTx(ctx, tx, s.defaultModes.serializable())
}

// commitTx captures tx's write set, hands the local transaction over to
// the engine (which commits it at its position in the log, or rolls it
// back and applies the write set there) and commits the write set through
// the cluster. A transaction that changed nothing replicated commits on
// this node alone (what it did to the session's temporary tables stays).
// A serializable transaction's write set carries what it read (keys,
// ranges, tables; many keys as a filter), on top of the tables the engine
// certifies as read anyway (rows locked where it could not see them).
func (s *Session) commitTx(ctx context.Context, tx engine.Tx, serializable bool) error {
	defer tx.Rollback()
	ws, err := tx.WriteSet()
	if err != nil {
		return err
	}
	if ws == nil {
		return tx.CommitLocal(ctx)
	}
	var filtered []writeset.Key // the exact keys read, when a filter carries them
	if serializable {
		read, err := tx.Reads(ctx)
		if err != nil {
			return err
		}
		ws.ReadTables = append(ws.ReadTables, read.Tables...)
		ws.ReadKeys, ws.ReadRanges = read.Keys, read.Ranges
		ws.Normalize()
		filtered = ws.CompactReads(s.node.cfg.ReadFilterFPRate)
		s.node.readSets.Add(1)
		s.node.readSetBytes.Add(uint64(ws.ReadSize()))
	}
	ws.TxID = s.node.newTxID()
	tx.HandOver(ws.TxID)
	seqno, err := s.node.Commit(ctx, ws)
	if err != nil {
		return s.node.explainReadConflict(err, filtered)
	}
	s.lastCommit = seqno
	if ws.Schema != writeset.SchemaNone {
		s.waitNewSequences(ctx)
	}
	return nil
}

// waitNewSequences waits (briefly) for the first values of the sequences
// a schema change just made (SERIAL and identity columns) to be reserved
// on this node, so that the table can be written here at once.
func (s *Session) waitNewSequences(ctx context.Context) {
	wctx, cancel := context.WithTimeout(ctx, sequenceWait)
	s.node.engine.WaitSequenceValues(wctx, "")
	cancel()
}

func (s *Session) commitBlock(ctx context.Context, w result.Writer) error {
	if s.failed {
		s.endTx()
		return w.Complete("ROLLBACK")
	}
	tx := s.tx
	s.tx = nil
	s.inBlock, s.savepoints = false, nil
	if tx != nil {
		if err := s.commitTx(ctx, tx, s.modes.serializable()); err != nil {
			s.rollbackSettings()
			return err
		}
	}
	s.commitSettings()
	return w.Complete("COMMIT")
}

// savepoint runs SAVEPOINT, RELEASE [SAVEPOINT] and ROLLBACK TO [SAVEPOINT]
// as PostgreSQL does: names may repeat, and each command acts on the most
// recent savepoint of its name; RELEASE drops it and the later ones,
// ROLLBACK TO undoes what came after it, keeps it, and brings a failed
// block back.
func (s *Session) savepoint(ctx context.Context, st statement, w result.Writer) error {
	cmd, name, err := parseSavepoint(st.sql)
	if err != nil {
		return err
	}
	if !s.inBlock {
		return sqlerr.New(sqlerr.NoActiveTransaction, "%s can only be used in transaction blocks", cmd)
	}
	if s.failed && cmd != "ROLLBACK TO SAVEPOINT" {
		return errInFailedBlock
	}
	if cmd == "SAVEPOINT" {
		// The engine Tx begins here if the block has not run a statement
		// yet: its mark must come before anything the block does.
		if err := s.beginIfNeeded(ctx); err != nil {
			return err
		}
		if err := s.tx.Savepoint(ctx); err != nil {
			return err
		}
		s.savepoints = append(s.savepoints, name)
		s.saveSettings()
		return w.Complete("SAVEPOINT")
	}
	i := len(s.savepoints) - 1
	for i >= 0 && s.savepoints[i] != name {
		i--
	}
	if i < 0 {
		return sqlerr.New(sqlerr.InvalidSavepoint, "savepoint %q does not exist", name)
	}
	if cmd == "RELEASE SAVEPOINT" {
		if err := s.tx.Release(ctx, i+1); err != nil {
			return err
		}
		// As PostgreSQL, the end of a subtransaction ends its SET
		// TRANSACTION READ ONLY.
		s.modes.readOnly = s.block.marks[i][0].modes.readOnly
		s.savepoints = s.savepoints[:i]
		s.block.marks = s.block.marks[:i]
		return w.Complete("RELEASE")
	}
	if err := s.tx.RollbackTo(ctx, i+1); err != nil {
		return err
	}
	s.savepoints = s.savepoints[:i+1]
	s.rollbackSettingsTo(i)
	s.failed = false
	return w.Complete("ROLLBACK")
}

// parseSavepoint parses SAVEPOINT name, RELEASE [SAVEPOINT] name and
// ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name. It returns the
// command's name as PostgreSQL's errors spell it and the savepoint's name,
// folded to lower case unless quoted.
func parseSavepoint(sql string) (cmd, name string, err error) {
	toks, ok := savepointTokens(sql)
	upper := func(i int) string {
		if i < len(toks) && toks[i][0] != '"' {
			return strings.ToUpper(toks[i])
		}
		return ""
	}
	i := 1
	switch upper(0) {
	case "SAVEPOINT":
		cmd = "SAVEPOINT"
	case "RELEASE":
		cmd = "RELEASE SAVEPOINT"
		if upper(1) == "SAVEPOINT" && len(toks) > 2 {
			i = 2
		}
	case "ROLLBACK":
		cmd = "ROLLBACK TO SAVEPOINT"
		if w := upper(i); w == "WORK" || w == "TRANSACTION" {
			i++
		}
		if upper(i) != "TO" {
			ok = false
		}
		i++
		if upper(i) == "SAVEPOINT" && len(toks) > i+1 {
			i++
		}
	}
	if !ok || cmd == "" || len(toks) != i+1 {
		return "", "", sqlerr.New(sqlerr.SyntaxError, "syntax error in %q: expected one savepoint name", sql)
	}
	name = toks[i]
	if name[0] == '"' {
		name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
	} else {
		name = strings.ToLower(name)
	}
	return cmd, name, nil
}

// savepointTokens splits a savepoint command into words and quoted
// identifiers (kept with their quotes); ok is false for anything else.
func savepointTokens(sql string) (toks []string, ok bool) {
	for i := 0; i < len(sql); {
		switch c := sql[i]; {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '"':
			j := skipQuoted(sql, i, '"')
			if j > len(sql) || sql[j-1] != '"' || j-i < 3 {
				return nil, false
			}
			toks = append(toks, sql[i:j])
			i = j
		case isIdent(c) && !(c >= '0' && c <= '9'):
			j := i
			for j < len(sql) && (isIdent(sql[j]) || sql[j] == '$') {
				j++
			}
			toks = append(toks, sql[i:j])
			i = j
		default:
			return nil, false
		}
	}
	return toks, true
}

// ddl runs a schema change in total order on every node: on its own, or
// inside the block's transaction (whose write set then carries it), if the
// engine can. One that changes only the session's own temporary objects
// runs on this node alone, as PostgreSQL finds (localDDL).
func (s *Session) ddl(ctx context.Context, st statement, w result.Writer) error {
	if s.readOnlyNow() {
		return errReadOnly(pgparse.SchemaTag(st.sql))
	}
	if ran, err := s.localDDL(ctx, st, w); ran || err != nil {
		return err
	}
	if s.inBlock {
		if err := s.beginIfNeeded(ctx); err != nil {
			return err
		}
		ctx, cancel := s.statementContext(ctx)
		defer cancel()
		return s.tx.ExecSchema(ctx, st.sql, w)
	}
	ddl, err := s.node.engine.CheckDDL(s.engineCtx(ctx), st.sql)
	if errors.Is(err, engine.ErrRunAsTransaction) {
		return s.autocommit(ctx, st, w)
	}
	if err != nil {
		return err
	}
	seqno, err := s.node.Commit(ctx, &writeset.WriteSet{DDL: ddl.Statement, Tables: ddl.Tables})
	if err != nil {
		return err
	}
	s.lastCommit = seqno
	s.waitNewSequences(ctx)
	return w.Complete(pgparse.SchemaTag(st.sql))
}

// localDDL runs a schema statement that changes only the session's own
// objects (temporary tables, their indexes, temporary views and
// sequences), or nothing the engine keeps (engine.Tx.ExecLocal), like
// any local statement: in the
// block's transaction, or in one of its own, committed on this node
// alone (unless a function it ran wrote replicated rows: those commit
// through the cluster). It returns false, having run nothing, for a
// statement to replicate.
//
// What the statement's try sends the client (notices, a result) waits
// until it is known to have run here: a statement to replicate runs
// again, and says it again there.
func (s *Session) localDDL(ctx context.Context, st statement, w result.Writer) (bool, error) {
	held := holdNotices(ctx)
	ctx = held.ctx
	if s.inBlock {
		if err := s.beginIfNeeded(ctx); err != nil {
			return false, err
		}
		ctx, cancel := s.statementContext(ctx)
		defer cancel()
		buf := result.BufferFor(w)
		ran, err := s.tx.ExecLocal(ctx, st.sql, buf)
		held.release(ran || err != nil)
		if !ran || err != nil {
			return ran, err
		}
		return true, buf.Replay(w)
	}
	defer held.release(false) // those of a statement that ran are sent by then
	execCtx, cancel := s.statementContext(ctx)
	defer cancel()
	if err := s.readWait(execCtx); err != nil {
		return false, err
	}
	// Outside a block PostgreSQL runs a CONCURRENTLY on temporary
	// objects as without it, which a transaction of certa's can.
	sql := st.sql
	if cc, ok := pgparse.ParseConcurrently(sql); ok {
		if cc.Refusal != "" {
			return false, sqlerr.New(sqlerr.FeatureNotSupported, "%s", cc.Refusal)
		}
		sql = cc.SQL
	}
	tx, err := s.es.Begin(s.engineCtx(execCtx))
	if err != nil {
		return false, err
	}
	defer tx.Rollback()
	buf := result.BufferFor(w)
	ran, err := tx.ExecLocal(execCtx, sql, buf)
	if !ran || err != nil {
		// A routine definition's body is checked in this try alone
		// (engine.Engine.CheckDDL): what the check said is the client's.
		held.release(ran || err != nil || pgparse.IsRoutineDefinition(sql))
		return ran, err
	}
	held.release(true)
	if err := s.commitTx(ctx, tx, s.defaultModes.serializable()); err != nil {
		return true, err
	}
	return true, buf.Replay(w)
}

func (s *Session) report(name, value string) {
	s.reported = append(s.reported, [2]string{name, value})
}

// TakeReported returns the parameters whose values changed since the last
// call, as name and value pairs, for the client to be told
// (ParameterStatus).
func (s *Session) TakeReported() [][2]string {
	r := s.reported
	s.reported = nil
	return r
}

// statementContext bounds one statement by the session's statement_timeout.
func (s *Session) statementContext(ctx context.Context) (context.Context, context.CancelFunc) {
	if s.statementTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, s.statementTimeout)
}

// parseTimeout reads a PostgreSQL time setting: a number of milliseconds,
// or a number with a unit (us, ms, s, min, h, d); 0 means none.
func parseTimeout(v string) (time.Duration, error) {
	v = strings.TrimSpace(strings.ToLower(v))
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	n, err := strconv.ParseFloat(v[:i], 64)
	if err != nil || n < 0 {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "invalid value for a time setting: %q", v)
	}
	units := map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond,
		"s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}
	unit, ok := units[strings.TrimSpace(v[i:])]
	if !ok {
		return 0, sqlerr.New(sqlerr.InvalidParameterValue, "invalid unit in time setting %q: use us, ms, s, min, h or d", v)
	}
	return time.Duration(n * float64(unit)), nil
}

// The settings certa itself interprets.
const (
	settingConsistency = "certa.consistency"
	settingWaitFor     = "certa.wait_for"
	settingLastCommit  = "certa.last_commit_seqno"
)

// showName is the parameter a SHOW shows, as PostgreSQL names it (SHOW
// TRANSACTION ISOLATION LEVEL is transaction_isolation). st has a name.
func showName(st statement) string {
	if name, ok := pgparse.ParseShow(st.sql); ok {
		return name
	}
	return strings.ToLower(st.words[1])
}

func (s *Session) show(st statement, w result.Writer) error {
	if len(st.words) < 2 {
		return sqlerr.New(sqlerr.SyntaxError, "syntax error in SHOW: expected a parameter name")
	}
	name := showName(st)
	value, err := s.shownValue(name)
	if err != nil {
		return err
	}
	if err := w.Columns([]result.Column{{Name: showColumn(name), Type: result.Text}}); err != nil {
		return err
	}
	if err := w.Row([]result.Value{value}); err != nil {
		return err
	}
	return w.Complete("SHOW")
}

// shownValue is what SHOW name answers in this session.
func (s *Session) shownValue(name string) (value string, err error) {
	switch name {
	case settingConsistency:
		value = s.consistency
	case settingWaitFor:
		value = strconv.FormatUint(s.waitFor, 10)
	case settingLastCommit:
		value = strconv.FormatUint(s.lastCommit, 10)
	case "certa.applied_seqno":
		value = strconv.FormatUint(s.node.sm.applied.get(), 10)
	case "certa.read_sets", "certa.read_set_bytes", "certa.read_filter_false_positives":
		// The node's counters of serializable commits (Status), for
		// clients that measure them over SQL (certa bench).
		value = strconv.FormatUint(map[string]*atomic.Uint64{"certa.read_sets": &s.node.readSets,
			"certa.read_set_bytes": &s.node.readSetBytes, "certa.read_filter_false_positives": &s.node.filterFalsePositives}[name].Load(), 10)
	case "statement_timeout":
		value = pgParameters[name].show(float64(s.statementTimeout.Milliseconds()))
	case "transaction_isolation":
		value = s.modesNow().level()
	case "transaction_read_only":
		value = onOff(s.readOnlyNow())
	case "transaction_deferrable":
		value = onOff(s.modesNow().deferrable)
	case "default_transaction_read_only":
		value = onOff(s.defaultModes.readOnly)
	case "server_version":
		value = "15.0"
	case "session_authorization":
		value = s.user
	default:
		v, ok := s.settings[name]
		_, known := pgParameters[name]
		switch {
		case !known && (!ok || strings.HasPrefix(name, "certa.")):
			// A custom name (myapp.x) is known once set.
			return "", sqlerr.New(sqlerr.UndefinedObject, "unrecognized configuration parameter %q", name)
		case known && v == "":
			v = defaultShown(name)
		}
		value = v
	}
	return value, nil
}

// showColumn is the name of SHOW's column for the setting name: its
// name as PostgreSQL spells it (DateStyle, TimeZone, IntervalStyle).
func showColumn(name string) string {
	if c, ok := map[string]string{"datestyle": "DateStyle", "timezone": "TimeZone", "intervalstyle": "IntervalStyle"}[name]; ok {
		return c
	}
	return name
}

var defaultSettings = map[string]string{
	"client_encoding":             "UTF8",
	"server_encoding":             "UTF8",
	"datestyle":                   "ISO, MDY",
	"timezone":                    "UTC",
	"standard_conforming_strings": "on",
	"integer_datetimes":           "on",
	"search_path":                 `"$user", public`,
	"max_identifier_length":       "63",
}
