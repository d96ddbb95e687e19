package postgres

import (
	"context"
	"errors"
	"strings"

	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// execTableCopy runs a CREATE TABLE AS or SELECT INTO that fills a
// replicated table as two statements of the transaction: a schema
// statement that makes the table empty (WITH NO DATA), replicated as any
// block's, and an INSERT of the query's rows into it, captured as any
// insert. PostgreSQL writes a CREATE TABLE AS's rows before a trigger
// could see them, and running the statement again on every node would
// compute them again (now(), random(), a LIMIT without ORDER BY, rows
// that differ between nodes): the rows travel instead, as computed here.
// The client gets PostgreSQL's tag (SELECT n) and its errors' positions
// in its own text.
func (t *Tx) execTableCopy(ctx context.Context, tc *pgparse.TableCopy, w result.Writer) error {
	made, err := t.execSchema(ctx, tc.Create.SQL, result.Discard)
	if err != nil {
		return clientPosition(err, tc.Create)
	}
	if len(made) == 0 {
		// CREATE TABLE IF NOT EXISTS found the table (PostgreSQL said so
		// in a notice) and fills nothing.
		return w.Complete("CREATE TABLE AS")
	}
	// The table made: the schema named, or else the one an unqualified
	// CREATE TABLE makes tables in.
	r := t.c.pg.ExecParams(ctx, "SELECT format('%I.%I', coalesce(nullif($1, ''), current_schema()), $2::text)",
		[][]byte{[]byte(tc.Schema), []byte(tc.Name)}, nil, nil, nil).Read()
	if r.Err != nil {
		return pgError(r.Err)
	}
	insert := tc.Insert(string(r.Rows[0][0]))
	sql := withSessionSequences(t.seqs, insert.SQL)
	t.seqNamed = t.seqNamed || namesSequenceWrite(strings.ToLower(sql))
	t.setvalNamed = t.setvalNamed || namesSetval(strings.ToLower(sql))
	err = t.e.localError(run(ctx, t.c, sql, selectTag{w}, nil))
	if sql != insert.SQL {
		return withoutPosition(err)
	}
	return clientPosition(err, insert)
}

// selectTag completes an INSERT with the tag of the CREATE TABLE AS or
// SELECT INTO it stands for: SELECT and the count of rows.
type selectTag struct{ result.Writer }

func (w selectTag) Complete(tag string) error {
	if n, ok := strings.CutPrefix(tag, "INSERT 0 "); ok {
		tag = "SELECT " + n
	}
	return w.Writer.Complete(tag)
}

// rewrite is a client's statement rewritten, which maps a position in
// its text back to the client's (pgparse.Rewritten, pgparse.Hidden).
type rewrite interface{ ClientPosition(int) int }

// clientPosition returns err with its position in r's text moved to the
// client's (none, where r's text is certa's own).
func clientPosition(err error, r rewrite) error {
	var e *sqlerr.Error
	if !errors.As(err, &e) || e.Position == 0 {
		return err
	}
	c := *e
	c.Position = int32(r.ClientPosition(int(e.Position)))
	return &c
}
