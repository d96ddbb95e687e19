package postgres

import (
	"context"
	"errors"
	"io"
	"strconv"
	"strings"

	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// copyStatement returns the COPY of sql if it is one to or from the
// client. Cheap for other statements: COPY must come first.
func copyStatement(sql string) (pgparse.Copy, bool) {
	s := strings.TrimLeft(sql, " \t\r\n")
	if len(s) < 4 || !strings.EqualFold(s[:4], "copy") {
		return pgparse.Copy{}, false
	}
	return pgparse.ParseCopy(sql)
}

// runCopy runs a COPY to or from the client on c: the data goes through
// w's Copier (pgwire's) as PostgreSQL takes or gives it. The client is
// told of the copy only once PostgreSQL has begun it, so a COPY PostgreSQL
// refuses (a read-only transaction's COPY FROM: 25006) is a plain error.
// Rows copied in fire the capture triggers like any insert.
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
	if cp.From {
		in := &lazyReader{open: func() (io.Reader, error) { return copier.CopyIn(format, columns) }}
		tag, err := c.pg.CopyFrom(ctx, in, sql)
		if err != nil {
			return copyError(in.err, err)
		}
		return w.Complete(tag.String())
	}
	out := &lazyWriter{open: func() (io.WriteCloser, error) { return copier.CopyOut(format, columns) }}
	tag, err := c.pg.CopyTo(ctx, out, sql)
	if err != nil {
		return copyError(out.err, err)
	}
	if err := out.finish(); err != nil {
		return err
	}
	return w.Complete(tag.String())
}

// copyError is the error of a failed COPY: the Copier's own (the client
// went away; the data could not be asked for again), or PostgreSQL's.
func copyError(copierErr, err error) error {
	if copierErr != nil {
		if errors.Is(copierErr, result.ErrCopyOnce) {
			return sqlerr.Wrap(copierErr, sqlerr.SerializationFailure, "could not serialize access: %v", copierErr)
		}
		return copierErr
	}
	return pgError(err)
}

// copyColumns returns the number of columns the copy carries: those
// listed, else the table's (not generated ones), or the query's.
func copyColumns(ctx context.Context, c *conn, cp pgparse.Copy) (int, error) {
	if cp.Columns > 0 {
		return cp.Columns, nil
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

// lazyReader opens its reader at the first Read.
type lazyReader struct {
	open func() (io.Reader, error)
	r    io.Reader
	err  error // open's, or the reader's other than io.EOF
}

func (l *lazyReader) Read(p []byte) (int, error) {
	if l.r == nil && l.err == nil {
		l.r, l.err = l.open()
	}
	if l.err != nil {
		return 0, l.err
	}
	n, err := l.r.Read(p)
	if err != nil && err != io.EOF {
		l.err = err
	}
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
