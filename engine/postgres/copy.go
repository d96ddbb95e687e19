package postgres

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"

	"certa/engine"
	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// runCopy runs a COPY to or from the client on c: the data goes through
// w's Copier (pgwire's) as PostgreSQL takes or gives it. The client is
// asked for COPY FROM's data only once PostgreSQL took the statement
// (probeCopyFrom): psql running a script sends the lines that follow a
// COPY FROM stdin as its data once asked, and a COPY PostgreSQL refuses
// (a generated column, a WHERE on one) swallowed the script's next
// statements. It is told of COPY TO's data only once PostgreSQL sends
// some, so a refused COPY TO is a plain error. Rows copied in fire the
// capture triggers like any insert.
func runCopy(ctx context.Context, c *conn, cp pgparse.Copy, sql string, w result.Writer) error {
	copier, ok := w.(result.Copier)
	if !ok {
		return sqlerr.New(sqlerr.FeatureNotSupported, "certa: COPY to or from the client is not possible here")
	}
	columns, err := copyColumns(ctx, c, cp)
	if err != nil {
		return err
	}
	var format int16
	if cp.Binary {
		format = 1
	}
	if cp.From && !cp.Freeze() {
		if err := probeCopyFrom(ctx, c, sql); err != nil {
			return err
		}
	}
	defer c.forwardNotices(ctx)() // the statement's (its triggers'), not the probe's
	if cp.From {
		in, err := copier.CopyIn(format, columns)
		if err != nil {
			return engine.CopierError(err)
		}
		tag, err := c.pg.CopyFrom(ctx, in, sql)
		if err != nil {
			return pgError(err)
		}
		return w.Complete(tag.String())
	}
	out := &lazyWriter{open: func() (io.WriteCloser, error) { return copier.CopyOut(format, columns) }}
	tag, err := c.pg.CopyTo(ctx, out, sql)
	if out.err != nil {
		return engine.CopierError(out.err)
	}
	if err != nil {
		return pgError(err)
	}
	if err := out.finish(); err != nil {
		return engine.CopierError(err)
	}
	return w.Complete(tag.String())
}

// probeCopyFrom has PostgreSQL check COPY FROM STDIN sql in a savepoint
// (not COPY FREEZE, which PostgreSQL takes only in the subtransaction
// that made or emptied the table: pgbench -i)
// it rolls back: the statement is sent and, once PostgreSQL asks for
// data, ended with CopyFail. PostgreSQL's refusal of the statement itself
// is returned; the CopyFail's own error is not. One round trip more per
// COPY FROM (a bulk load).
func probeCopyFrom(ctx context.Context, c *conn, sql string) error {
	if _, err := c.pg.Exec(ctx, "SAVEPOINT certa_copy").ReadAll(); err != nil {
		return pgError(err)
	}
	_, err := c.pg.CopyFrom(ctx, probeReader{}, sql)
	if _, rerr := c.pg.Exec(context.WithoutCancel(ctx), "ROLLBACK TO SAVEPOINT certa_copy; RELEASE SAVEPOINT certa_copy").ReadAll(); rerr != nil {
		return pgError(rerr)
	}
	if err == nil || strings.Contains(err.Error(), errProbe.Error()) {
		return nil
	}
	return pgError(err)
}

// errProbe ends probeCopyFrom's COPY, as its CopyFail message.
var errProbe = errors.New("certa: probe of COPY FROM, no data")

// probeReader is COPY data that fails at once (CopyFail).
type probeReader struct{}

func (probeReader) Read([]byte) (int, error) { return 0, errProbe }

// copyColumns returns the number of columns the copy carries: those
// listed, else the table's (not generated ones), or the query's.
func copyColumns(ctx context.Context, c *conn, cp pgparse.Copy) (int, error) {
	if len(cp.Columns) > 0 {
		return len(cp.Columns), nil
	}
	if cp.Query != "" {
		sd, err := c.pg.Prepare(ctx, "", cp.Query, nil)
		if err != nil {
			return 0, pgError(err)
		}
		return len(sd.Fields), nil
	}
	name := quoteIdent(cp.Table)
	if cp.Schema != "" {
		name = quoteIdent(cp.Schema) + "." + name
	}
	r := c.pg.ExecParams(ctx, `SELECT count(*) FROM pg_attribute WHERE attrelid = to_regclass($1)
		AND attnum > 0 AND NOT attisdropped AND attgenerated = ''`, [][]byte{[]byte(name)}, nil, nil, nil).Read()
	if r.Err != nil {
		return 0, pgError(r.Err)
	}
	n, err := strconv.Atoi(string(r.Rows[0][0]))
	return n, err
}

// lazyWriter opens its writer at the first Write, or at finish.
type lazyWriter struct {
	open func() (io.WriteCloser, error)
	w    io.WriteCloser
	err  error // open's, or the writer's
}

func (l *lazyWriter) Write(p []byte) (int, error) {
	if l.w == nil && l.err == nil {
		l.w, l.err = l.open()
	}
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.w.Write(p)
	if err != nil {
		l.err = err
	}
	return n, err
}

// finish ends the copy: opened (if no data came) and closed.
func (l *lazyWriter) finish() error {
	if l.w == nil && l.err == nil {
		l.w, l.err = l.open()
	}
	if l.err != nil {
		return l.err
	}
	return l.w.Close()
}
