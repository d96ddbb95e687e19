package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// errRowMismatch: a row change does not match the rows it changes (the
// row to update or delete is not there, or the one to insert is); the
// write set cannot be applied as certified.
var errRowMismatch = errors.New("row changes no longer match the table's rows")

// applyRows applies rows in the transaction open on conn, which runs
// with session_replication_role = replica: the rows are the origin's
// result, so no trigger and no foreign-key action runs again. Values go
// through jsonb_populate_record, which reads each in its column's type.
//
// A schema statement among the rows (opSchema) runs as the client role,
// which then owns what it makes, as a DDL write set's does (with makeWay:
// runSchemaChange).
func applyRows(ctx context.Context, conn *pgconn.PgConn, ts *tables, rows []rowChange, token string, makeWay *tempWay) error {
	for len(rows) > 0 {
		if rows[0].op == opSchema {
			ts.reset()
			sc, err := decodeSchemaChange(string(rows[0].newRow))
			if err != nil {
				return err
			}
			if err := runSchemaChange(ctx, conn, token, sc, true, makeWay); err != nil {
				return err
			}
			rows = rows[1:]
			continue
		}
		n := 1
		for n < len(rows) && rows[n].op != opSchema {
			n++
		}
		plan, err := planRows(ctx, conn, ts, rows[:n])
		if err != nil {
			return err
		}
		for _, st := range plan {
			if err := affected(conn.ExecParams(ctx, st.sql, st.args, nil, nil, nil).Read(), st.rows); err != nil {
				return fmt.Errorf("apply %s: %w", st.what, err)
			}
		}
		rows = rows[n:]
	}
	return nil
}

// rowStatement is one statement of the applier: it must change exactly
// rows rows.
type rowStatement struct {
	sql  string
	args [][]byte
	rows int
	what string // for errors: "U row of public.t"
}

// planRows turns row changes (no schema statement among them) into the
// statements that apply them, reading the tables' metadata through conn
// (cached in ts).
//
// Consecutive inserts (or deletes) of one table go in one statement: a
// bulk INSERT ... SELECT took a round trip per row. A table without a
// key takes all its changes among rows together, wherever they stand
// (planWholeRows): a client's trigger may have written another table
// between two changes of one of its rows. The order of changes across
// tables does not matter to the applier, whose session fires no trigger
// and checks no foreign key (session_replication_role = replica): a
// table's own constraints see its own changes in their order.
func planRows(ctx context.Context, conn *pgconn.PgConn, ts *tables, rows []rowChange) ([]rowStatement, error) {
	var plan []rowStatement
	taken := make([]bool, len(rows)) // planned with an earlier change of its table
	for i := 0; i < len(rows); {
		if taken[i] {
			i++
			continue
		}
		r := rows[i]
		m, err := ts.byTableName(ctx, conn, r.schema, r.table)
		if err != nil {
			return nil, fmt.Errorf("apply: %w", err)
		}
		if m.wholeRow() {
			var run []rowChange
			for j := i; j < len(rows) && len(run) < maxWholeRows; j++ {
				if !taken[j] && rows[j].schema == r.schema && rows[j].table == r.table {
					run, taken[j] = append(run, rows[j]), true
				}
			}
			plan = append(plan, planWholeRows(m, run)...)
			continue
		}
		n := 1
		if r.op == opInsert || r.op == opDelete {
			for i+n < len(rows) && n < maxBatchRows && rows[i+n].op == r.op && rows[i+n].schema == r.schema && rows[i+n].table == r.table {
				n++
			}
		}
		plan = append(plan, planRun(m, rows[i:i+n])...)
		i += n
	}
	return plan, nil
}

// maxBatchRows bounds the rows of one statement of the applier.
const maxBatchRows = 1000

// maxWholeRows bounds the changes of a table without a key taken together
// (planWholeRows): each batch reads the whole table once, so a batch is
// as large as a transaction's changes usually are.
const maxWholeRows = 100_000

// planRun returns the statements that apply rows of one table: inserts or
// deletes (one statement for all), or one update. Each changes the table
// named, ONLY: a row change is captured on the table that holds the row
// (a child of an inherited table, a partition), and the same key may be
// in a parent and its child. Functions are qualified and parameters typed
// (jsonb): a client's function of the same name in another schema, with
// an argument of another type, is never the one called.
func planRun(m *tableMeta, rows []rowChange) []rowStatement {
	t, cols, pk := m.sqlName(), m.cols, m.pk
	src := jsonSource(t)
	if hasRecord(rows[0]) {
		src = recordSource(t)
	}
	what := fmt.Sprintf("%c row of %s", rows[0].op, t)
	insert := fmt.Sprintf("INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %s", t, quoteIdents(cols), src.cols(cols), src.many(1))
	// Deletes find their rows through the key's index: the planner does
	// not see how few rows the source returns, and for an IN (SELECT ...)
	// it scanned the whole table (3 ms a row at 10,000 rows). One row: the
	// key as an init plan; several of a one-column key: = ANY of them;
	// several of a longer key: a semi-join.
	delOne := fmt.Sprintf("DELETE FROM ONLY %s WHERE (%s) = (SELECT %s FROM %s)", t, quoteIdents(pk), src.cols(pk), src.one(1))
	del := fmt.Sprintf("DELETE FROM ONLY %s WHERE (%s) IN (SELECT %s FROM %s)", t, quoteIdents(pk), src.cols(pk), src.many(1))
	if len(m.pk) == 1 {
		del = fmt.Sprintf("DELETE FROM ONLY %s WHERE %s = ANY (ARRAY(SELECT %s FROM %s))", t, quoteIdents(pk), src.cols(pk), src.many(1))
	}
	one := func(sql string, arg []byte, n int) rowStatement {
		return rowStatement{sql: sql, args: [][]byte{arg}, rows: n, what: what}
	}
	newRows := func() []byte { return jsonArray(rows, func(r rowChange) []byte { return r.newRow }) }
	oldKeys := func() []byte { return jsonArray(rows, func(r rowChange) []byte { return r.oldKey }) }
	r := rows[0]
	switch {
	case r.op == opInsert:
		return []rowStatement{one(insert, newRows(), len(rows))}
	case r.op == opDelete && len(rows) == 1:
		return []rowStatement{one(delOne, r.oldKey, 1)}
	case r.op == opDelete:
		return []rowStatement{one(del, oldKeys(), len(rows))}
	case m.alwaysIdentity:
		// As a delete and an insert: no trigger, no foreign-key check
		// runs in between (session_replication_role = replica).
		return []rowStatement{one(delOne, r.oldKey, 1), one(insert, newRows(), 1)}
	}
	where := fmt.Sprintf("(%s) = (SELECT %s FROM %s)", quoteIdents(pk), src.cols(pk), src.one(2))
	update := fmt.Sprintf("UPDATE ONLY %s SET (%s) = (SELECT %s FROM %s) WHERE %s", t, quoteIdents(cols), src.cols(cols), src.one(1), where)
	return []rowStatement{{sql: update, args: [][]byte{r.newRow, r.oldKey}, rows: 1, what: what}}
}

// planWholeRows returns the statements that apply consecutive changes of
// one table without a key (DESIGN.md, "Tables without a primary key"):
// rows are their values alone, and identical rows cannot be told apart,
// so the changes are a multiset's. An update is its old row out and its
// new row in; what the changes put in and take out of one value cancels
// out, whatever their order (a client's trigger may change a row of the
// statement before the row's own change is captured: roworder.go). What
// is left is one DELETE of the old rows (each value as many times as it
// goes, found in one scan of the table) and one INSERT of the new: the
// table is read once per batch, not once per row.
func planWholeRows(m *tableMeta, rows []rowChange) []rowStatement {
	t := m.sqlName()
	src := jsonSource(t)
	if hasRecord(rows[0]) {
		src = recordSource(t)
	}
	net := map[string]int{} // rows of a value put in less those taken out
	var values [][]byte     // each value once, in the order first met
	count := func(image []byte, n int) {
		if _, ok := net[string(image)]; !ok {
			values = append(values, image)
		}
		net[string(image)] += n
	}
	for _, r := range rows {
		if r.op != opInsert {
			count(r.oldKey, -1)
		}
		if r.op != opDelete {
			count(r.newRow, 1)
		}
	}
	var outs, keep []rowChange
	for _, image := range values {
		for n := net[string(image)]; n < 0; n++ {
			outs = append(outs, rowChange{oldKey: image})
		}
		for n := net[string(image)]; n > 0; n-- {
			keep = append(keep, rowChange{newRow: image})
		}
	}
	var plan []rowStatement
	what := fmt.Sprintf("%c row of %s", rows[0].op, t)
	if len(outs) > 0 {
		// Each value's rows numbered, as many taken as go: the rows found
		// by ctid (a TID scan), the table read once through a hash join.
		del := fmt.Sprintf(`WITH want AS (SELECT %s AS img, pg_catalog.count(*) AS k FROM pg_catalog.jsonb_array_elements($1::pg_catalog.jsonb) e GROUP BY 1),
found AS (SELECT r.ctid AS id, w.k, pg_catalog.row_number() OVER (PARTITION BY w.img) AS n FROM ONLY %s r JOIN want w ON %s OPERATOR(pg_catalog.=) w.img)
DELETE FROM ONLY %s WHERE ctid OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT id FROM found WHERE n OPERATOR(pg_catalog.<=) k))`,
			src.image("e.value"), t, src.rowImage("r"), t)
		plan = append(plan, rowStatement{sql: del, args: [][]byte{jsonArray(outs, func(r rowChange) []byte { return r.oldKey })}, rows: len(outs), what: what})
	}
	if len(keep) > 0 {
		insert := fmt.Sprintf("INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM %s", t, quoteIdents(m.cols), src.cols(m.cols), src.many(1))
		plan = append(plan, rowStatement{sql: insert, args: [][]byte{jsonArray(keep, func(r rowChange) []byte { return r.newRow })}, rows: len(keep), what: what})
	}
	return plan
}

// rowSource is how the applier's statements read rows of table t from a
// jsonb parameter: a FROM item for one object ($n) or an array of them,
// the select list of some columns of it, and a condition that table row
// alias is the row in $n (a table without a key).
type rowSource struct {
	one, many func(n int) string
	cols      func(names []string) string
	// image is the text that tells a row of a table without a key from
	// another (the values as written, numeric's scale included, which
	// jsonb's = would not compare): of the row in JSON object json, and
	// of table row alias.
	image, rowImage func(string) string
}

// jsonSource reads rows as JSON objects of their columns, through
// jsonb_populate_record, which reads each value in its column's type.
func jsonSource(t string) rowSource {
	return rowSource{
		one: func(n int) string {
			return fmt.Sprintf("pg_catalog.jsonb_populate_record(NULL::%s, $%d::pg_catalog.jsonb)", t, n)
		},
		many: func(n int) string {
			return fmt.Sprintf("pg_catalog.jsonb_populate_recordset(NULL::%s, $%d::pg_catalog.jsonb)", t, n)
		},
		cols: quoteIdents,
		image: func(json string) string {
			return fmt.Sprintf("%s::pg_catalog.text", json)
		},
		rowImage: func(alias string) string {
			return fmt.Sprintf("certa.row_jsonb(%s)::pg_catalog.text", alias)
		},
	}
}

// recordSource reads rows from their record text (recordKey), which the
// table's row type reads back exactly: json keeps its text, a jsonb JSON
// null stays one, a domain's check sees the real value. OFFSET 0 keeps
// the planner from reading the text again for each column.
func recordSource(t string) rowSource {
	text := func(json string) string {
		return fmt.Sprintf("(%s OPERATOR(pg_catalog.->>) '%s'::pg_catalog.text)", json, recordKey)
	}
	return rowSource{
		one: func(n int) string {
			return fmt.Sprintf("(SELECT %s::%s AS r OFFSET 0) x", text(fmt.Sprintf("$%d::pg_catalog.jsonb", n)), t)
		},
		many: func(n int) string {
			return fmt.Sprintf("(SELECT %s::%s AS r FROM pg_catalog.jsonb_array_elements($%d::pg_catalog.jsonb) e OFFSET 0) x", text("e.value"), t, n)
		},
		cols: func(names []string) string {
			q := make([]string, len(names))
			for i, n := range names {
				q[i] = "(x.r)." + quoteIdent(n)
			}
			return strings.Join(q, ", ")
		},
		image: text,
		rowImage: func(alias string) string {
			return fmt.Sprintf("certa.row_text(%s)", alias)
		},
	}
}

// hasRecord reports whether r's rows carry their record text (they were
// captured by certa.capture_row_exact).
func hasRecord(r rowChange) bool {
	row := r.newRow
	if row == nil {
		row = r.oldKey
	}
	return bytes.Contains(row, []byte(`"`+recordKey+`": `))
}

// jsonArray makes a JSON array of one JSON object of each row.
func jsonArray(rows []rowChange, obj func(rowChange) []byte) []byte {
	b := []byte{'['}
	for i, r := range rows {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, obj(r)...)
	}
	return append(b, ']')
}

// affected checks a statement's result changed exactly n rows.
func affected(res *pgconn.Result, n int) error {
	if res.Err != nil {
		return res.Err
	}
	if res.CommandTag.RowsAffected() != int64(n) {
		return errRowMismatch
	}
	return nil
}
