package postgres

import (
	"context"
	"errors"
	"fmt"

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
func applyRows(ctx context.Context, conn *pgconn.PgConn, ts *tables, rows []rowChange) error {
	for _, r := range rows {
		m, err := ts.byTableName(ctx, conn, r.schema, r.table)
		if err != nil {
			return fmt.Errorf("apply: %w", err)
		}
		t, cols, pk := m.sqlName(), quoteIdents(m.cols), quoteIdents(m.pk)
		insert := fmt.Sprintf("INSERT INTO %s (%s) OVERRIDING SYSTEM VALUE SELECT %s FROM jsonb_populate_record(NULL::%s, $1)", t, cols, cols, t)
		del := fmt.Sprintf("DELETE FROM %s WHERE (%s) = (SELECT %s FROM jsonb_populate_record(NULL::%s, $1))", t, pk, pk, t)
		var sql string
		var args [][]byte
		switch {
		case r.op == opInsert:
			sql, args = insert, [][]byte{r.newRow}
		case r.op == opUpdate && m.alwaysIdentity:
			// As a delete and an insert: no trigger, no foreign-key check
			// runs in between (session_replication_role = replica).
			if err := execOne(ctx, conn, del, [][]byte{r.oldKey}); err != nil {
				return fmt.Errorf("apply %c row of %s: %w", r.op, t, err)
			}
			sql, args = insert, [][]byte{r.newRow}
		case r.op == opUpdate:
			sql = fmt.Sprintf("UPDATE %s SET (%s) = (SELECT %s FROM jsonb_populate_record(NULL::%s, $1)) WHERE (%s) = (SELECT %s FROM jsonb_populate_record(NULL::%s, $2))",
				t, cols, cols, t, pk, pk, t)
			args = [][]byte{r.newRow, r.oldKey}
		case r.op == opDelete:
			sql, args = del, [][]byte{r.oldKey}
		}
		if err := execOne(ctx, conn, sql, args); err != nil {
			return fmt.Errorf("apply %c row of %s: %w", r.op, t, err)
		}
	}
	return nil
}

// execOne runs a statement that must change exactly one row.
func execOne(ctx context.Context, conn *pgconn.PgConn, sql string, args [][]byte) error {
	res := conn.ExecParams(ctx, sql, args, nil, nil, nil).Read()
	if res.Err != nil {
		return res.Err
	}
	if res.CommandTag.RowsAffected() != 1 {
		return errRowMismatch
	}
	return nil
}
