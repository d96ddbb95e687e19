package postgres

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/writeset"
)

// captured is what a transaction changed, as a write set carries it.
type captured struct {
	rows   []rowChange
	keys   []writeset.Key
	tables []string        // of the rows and of the schema statements
	schema writeset.Schema // what its schema statements changed
	// shared are the keys of referenced parent rows (refkeys.go), parents
	// the same as a set.
	shared  []writeset.Key
	parents map[writeset.Key]bool
	// locked are the keys of rows nested SELECTs locked for update.
	locked []writeset.Key
	// index are the index entries of rows inserted or moved (indexreads.go).
	index []writeset.Key
}

// capture reads back what the capture triggers recorded of the
// transaction open on conn, in the order its rows changed, and its schema
// statements in their places (Tx.ExecSchema), and returns them with the
// write set's keys and tables. The transaction must
// run as the client role (only its changes are captured), with deferred
// constraints made immediate first (their actions are changes too). The
// rows stay (clients cannot delete them); gcCapture deletes them once the
// transaction has ended.
func capture(ctx context.Context, conn *pgconn.PgConn, ts *tables) (c captured, err error) {
	r := conn.ExecParams(ctx, captureSQL, nil, nil, nil, nil).Read()
	if r.Err != nil {
		return c, r.Err
	}
	return captureRows(ctx, conn, ts, r.Rows)
}

// captureSQL reads the capture rows of the transaction open on the
// connection, in text format.
const captureSQL = `SELECT rel, op, old, new FROM certa.captured() ORDER BY seq`

// captureRows turns the rows captureSQL read into the transaction's
// changes, with the tables' metadata from ts (read through conn).
func captureRows(ctx context.Context, conn *pgconn.PgConn, ts *tables, rows [][][]byte) (c captured, err error) {
	var oldBuf, newBuf rowCols // reused from row to row
	var trace []rowTrace       // of c.rows, for orderRows
	for _, row := range rows {
		if row[1][0] == opSchema {
			if err := c.addSchema(row[2], row[3]); err != nil {
				return c, err
			}
			trace = append(trace, rowTrace{})
			continue
		}
		rel, err := strconv.ParseUint(string(row[0]), 10, 32)
		if err != nil {
			return c, fmt.Errorf("capture: table oid %q", row[0])
		}
		m, err := ts.byRelOID(ctx, conn, uint32(rel))
		if errors.Is(err, errNoTable) {
			// The transaction dropped the table after changing its rows
			// (it holds a lock on every table it wrote, so nobody else
			// did): its schema statements, which travel in their
			// places, create and drop it on every node, and the rows
			// end with it.
			continue
		}
		if err != nil {
			return c, fmt.Errorf("capture: %w", err)
		}
		if row[1][0] == opLocked {
			if !m.temp { // the session's own: nothing to certify
				_, key, err := keyOf(m, row[3])
				if err != nil {
					return c, err
				}
				c.locked = append(c.locked, key)
			}
			continue
		}
		refs, err := ts.refsOf(ctx, conn, m)
		if err != nil {
			return c, fmt.Errorf("capture: %w", err)
		}
		ch := rowChange{op: row[1][0], schema: m.schema, table: m.name}
		tr := rowTrace{keyed: !m.wholeRow(), hasOld: row[2] != nil, hasNew: row[3] != nil, oldImage: row[2]}
		var oldCols, newCols rowCols
		if row[2] != nil {
			if oldCols, err = parseRow(m, refs, row[2], oldBuf); err != nil {
				return c, err
			}
			oldKey, key, err := keyOfCols(m, row[2], oldCols)
			if err != nil {
				return c, err
			}
			ch.oldKey, tr.oldKey = oldKey, key
			c.keys = append(c.keys, key)
		}
		if row[3] != nil {
			if newCols, err = parseRow(m, refs, row[3], newBuf); err != nil {
				return c, err
			}
			_, key, err := keyOfCols(m, row[3], newCols)
			if err != nil {
				return c, err
			}
			ch.newRow, tr.newKey = bytes.Clone(row[3]), key
			if ch.op == opInsert || len(c.keys) == 0 || key != c.keys[len(c.keys)-1] {
				c.keys = append(c.keys, key) // an update of the key writes both
			}
		}
		if len(m.indexCols) > 0 && newCols != nil {
			index, err := m.indexKeys(ch.op, oldCols, newCols)
			if err != nil {
				return c, fmt.Errorf("capture: index entries of %s: %w", m.sqlName(), err)
			}
			c.index = append(c.index, index...)
		}
		if !refs.empty() {
			if err := c.refKeys(ctx, conn, ts, m, refs, ch.op, ch.newRow, oldCols, newCols); err != nil {
				return c, err
			}
		}
		c.rows = append(c.rows, ch)
		trace = append(trace, tr)
		c.tables = append(c.tables, m.keyTable())
		oldBuf, newBuf = oldCols[:0], newCols[:0]
	}
	c.rows = orderRows(c.rows, trace)
	return c, nil
}

// addSchema adds a schema statement's capture row: its text (new, a JSON
// string) and the tables it changed (old, a JSON array; null when it
// named no table of its own: it may have changed any).
func (c *captured) addSchema(tables, stmt []byte) error {
	var text string
	var names []string
	if err := json.Unmarshal(stmt, &text); err != nil || text == "" {
		return fmt.Errorf("capture: schema statement %q", stmt)
	}
	if tables != nil {
		if err := json.Unmarshal(tables, &names); err != nil {
			return fmt.Errorf("capture: tables of a schema statement %q", tables)
		}
	}
	c.rows = append(c.rows, rowChange{op: opSchema, newRow: []byte(text)})
	if len(names) == 0 {
		c.schema = writeset.SchemaAll
	} else if c.schema == writeset.SchemaNone {
		c.schema = writeset.SchemaTables
	}
	c.tables = append(c.tables, names...)
	return nil
}

// keyOf returns the JSON object of m's key columns in row (a JSON object
// of every column) and the row's write-set key.
//
// A table without a primary key (wholeRow) is keyed by its whole row: the
// JSON object as it is (in certa.canonicalOutput's forms, so the same row
// makes the same text everywhere), and a hash of it as the key.
func keyOf(m *tableMeta, row []byte) (keyJSON []byte, key writeset.Key, err error) {
	cols, err := parseRow(m, nil, row, nil)
	if err != nil {
		return nil, "", err
	}
	return keyOfCols(m, row, cols)
}

// parseRow returns the columns of row (a JSON object of every column of
// m), appended to buf, or nil if neither its key (wholeRow) nor refs
// needs them.
func parseRow(m *tableMeta, refs *tableRefs, row []byte, buf rowCols) (rowCols, error) {
	if m.wholeRow() && (refs == nil || refs.empty()) {
		return nil, nil
	}
	cols, err := parseObject(row, buf)
	if err != nil {
		return nil, fmt.Errorf("capture: row of %s: %w", m.sqlName(), err)
	}
	return cols, nil
}

// keyOfCols is keyOf of a row already parsed into cols (parseRow).
func keyOfCols(m *tableMeta, row []byte, cols rowCols) (keyJSON []byte, key writeset.Key, err error) {
	if m.wholeRow() {
		// Keyed by its JSON alone: a row locked FOR UPDATE (certa.row_jsonb)
		// has no record text.
		sum := sha256.Sum256(withoutRecord(row))
		return row, writeset.EncodeKey(m.keyTable(), "row "+hex.EncodeToString(sum[:])), nil
	}
	obj := make(map[string]json.RawMessage, len(m.pk))
	vals := make([]any, len(m.pk))
	for i, c := range m.pk {
		raw, ok := cols.get(c)
		if !ok {
			return nil, "", fmt.Errorf("capture: row of %s has no key column %s", m.sqlName(), c)
		}
		obj[c] = raw
		if vals[i], err = keyValue(raw); err != nil {
			return nil, "", fmt.Errorf("capture: key of %s: %w", m.sqlName(), err)
		}
	}
	if raw, ok := cols.get(recordKey); ok {
		obj[recordKey] = raw // the applier finds the row by the key's exact values
	}
	keyJSON, err = json.Marshal(obj)
	return keyJSON, writeset.EncodeKey(m.keyTable(), vals...), err
}

// withoutRecord returns row without its recordKey member, if it has one
// (last, as jsonb writes it). Inside a JSON string a quote is escaped, so
// `, "` + recordKey + `": ` is the member and nothing else.
func withoutRecord(row []byte) []byte {
	if i := bytes.Index(row, []byte(`, "`+recordKey+`": `)); i >= 0 {
		return append(row[:i:i], '}')
	}
	if bytes.HasPrefix(row, []byte(`{"`+recordKey+`": `)) {
		return []byte("{}")
	}
	return row
}

// rowCols are the members of a row's JSON object: column names and
// values, as slices of the row's text.
type rowCols []rowCol

type rowCol struct {
	name []byte
	raw  json.RawMessage
}

// get returns the value of column name.
func (r rowCols) get(name string) (json.RawMessage, bool) {
	for i := range r {
		if string(r[i].name) == name {
			return r[i].raw, true
		}
	}
	return nil, false
}

var errRowJSON = errors.New("not a JSON object")

// parseObject appends the members of the JSON object b to dst, without
// copying (encoding/json's map of RawMessages spent half the capture's
// time). It splits what jsonb writes; other text it refuses, or passes on
// to keyValue, which refuses what it cannot read.
func parseObject(b []byte, dst rowCols) (rowCols, error) {
	i := skipSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return nil, errRowJSON
	}
	if i = skipSpace(b, i+1); i < len(b) && b[i] == '}' {
		if skipSpace(b, i+1) != len(b) {
			return nil, errRowJSON
		}
		return dst, nil
	}
	for {
		if i == len(b) || b[i] != '"' {
			return nil, errRowJSON
		}
		end, escaped := scanString(b, i)
		if end < 0 {
			return nil, errRowJSON
		}
		name := b[i+1 : end-1]
		if escaped {
			var s string
			if err := json.Unmarshal(b[i:end], &s); err != nil {
				return nil, err
			}
			name = []byte(s)
		}
		if i = skipSpace(b, end); i == len(b) || b[i] != ':' {
			return nil, errRowJSON
		}
		i = skipSpace(b, i+1)
		end = scanValue(b, i)
		if end < 0 {
			return nil, errRowJSON
		}
		dst = append(dst, rowCol{name: name, raw: b[i:end]})
		switch i = skipSpace(b, end); {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}':
			if skipSpace(b, i+1) != len(b) {
				return nil, errRowJSON
			}
			return dst, nil
		default:
			return nil, errRowJSON
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// scanString returns the end of the JSON string starting at b[i] (after
// its closing quote; -1 if it has none) and whether it holds escapes.
func scanString(b []byte, i int) (end int, escaped bool) {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			escaped = true
			j++
		case '"':
			return j + 1, escaped
		}
	}
	return -1, escaped
}

// scanValue returns the end of the JSON value starting at b[i]; -1 if it
// does not end (a string, array or object without its close) or is empty.
func scanValue(b []byte, i int) int {
	if i == len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		end, _ := scanString(b, i)
		return end
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, _ := scanString(b, j)
				if end < 0 {
					return -1
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	}
	j := i
	for j < len(b) && !strings.ContainsRune(",}] \t\n\r", rune(b[j])) {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// keyValue converts a key column's JSON value to what writeset.EncodeKey
// takes, as the SQLite engine's keys have it, so that a key is the same
// on every node: integers as int64 (also when written with a fraction of
// zeros), other numbers as float64 (keys that differ beyond a double's
// digits, or past its range, then share a key: a conflict too many,
// never one too few), booleans as 0 and 1, strings as they are, other
// values (arrays, objects) as their JSON text, which jsonb writes in one
// canonical form.
func keyValue(raw json.RawMessage) (any, error) {
	switch {
	case len(raw) == 0:
		return nil, fmt.Errorf("empty value")
	case raw[0] == '"':
		if len(raw) >= 2 && raw[len(raw)-1] == '"' && bytes.IndexByte(raw, '\\') < 0 {
			return string(raw[1 : len(raw)-1]), nil // no escapes: as it is
		}
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case string(raw) == "true":
		return int64(1), nil
	case string(raw) == "false":
		return int64(0), nil
	case string(raw) == "null":
		return nil, nil
	case raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9':
		if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return n, nil
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if errors.Is(err, strconv.ErrRange) {
			return f, nil // ±Inf: every such number one key
		}
		if err == nil && math.Abs(f) >= 1<<53 && math.Abs(f) < 1<<63 {
			// A double cannot hold every integer here: 9007199254740993.0
			// must be the key of 9007199254740993 (numeric finds them
			// equal), not of its rounding.
			if r, ok := new(big.Rat).SetString(string(raw)); ok && r.IsInt() && r.Num().IsInt64() {
				return r.Num().Int64(), nil
			}
		}
		return f, err
	}
	return string(raw), nil
}

// gcEvery spaces the deletions of capture rows of ended transactions.
const gcEvery = time.Second

// gcLoop deletes old capture rows (gcCapture) every gcEvery until Close,
// on a connection of its own: on the applier's, between applies, the
// deletion stalled every commit behind it (280 ms each second under
// TPC-C). A failure is tried again at the next tick (a broken connection
// is replaced by Restore, or by the node's restart).
func (e *Engine) gcLoop() {
	defer close(e.gcDone)
	tick := time.NewTicker(gcEvery)
	defer tick.Stop()
	for {
		select {
		case <-e.gcStop:
			return
		case <-tick.C:
		}
		e.gcMu.Lock()
		if e.gcConn != nil && !e.gcConn.IsClosed() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			gcCapture(ctx, e.gcConn)
			cancel()
		}
		e.gcMu.Unlock()
	}
}

// gcCapture deletes the capture rows and global marks of transactions
// that have ended (committed ones: rolled-back ones left no rows), and the rows of
// certa.applied below the largest (a snapshot that sees the delete sees
// the largest too, so no one's applied seqno moves back).
func gcCapture(ctx context.Context, conn *pgconn.PgConn) error {
	_, err := conn.Exec(ctx, `DELETE FROM certa.capture WHERE xid < pg_snapshot_xmin(pg_current_snapshot());
		DELETE FROM certa.global_marks WHERE xid < pg_snapshot_xmin(pg_current_snapshot());
		DELETE FROM certa.applied WHERE seqno < (SELECT max(seqno) FROM certa.applied)`).ReadAll()
	return err
}
