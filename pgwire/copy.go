package pgwire

import (
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"

	"certa/result"
	"certa/sqlerr"
)

// The COPY sub-protocol, for an engine that runs PostgreSQL itself
// (result.Copier): CopyInResponse, then the client's CopyData until
// CopyDone or CopyFail; CopyOutResponse, then CopyData and CopyDone.

func copyFormats(format int16, columns int) []uint16 {
	f := make([]uint16, columns)
	for i := range f {
		f[i] = uint16(format)
	}
	return f
}

// copyIn starts a COPY FROM STDIN: the reader returns the client's data.
// A query of several statements may have several, one after the other.
func (c *conn) copyIn(format int16, columns int) (io.Reader, error) {
	if c.copying != nil && !c.copying.done {
		return nil, sqlerr.New(sqlerr.ProtocolViolation, "pgwire: a second COPY in one statement")
	}
	if err := c.send(&pgproto3.CopyInResponse{OverallFormat: byte(format), ColumnFormatCodes: copyFormats(format, columns)}); err != nil {
		return nil, err
	}
	if err := c.flush(); err != nil {
		return nil, err
	}
	c.setReadDeadline(time.Time{}) // no idle timeout while the client sends its data
	c.copying = &copyReader{c: c}
	return c.copying, nil
}

// copyReader reads the client's COPY data.
type copyReader struct {
	c      *conn
	buf    []byte
	done   bool  // CopyDone or CopyFail came, or the connection failed
	broken bool  // the connection failed
	err    error // what Read returns once buf is empty and done
}

func (r *copyReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.done {
			return 0, r.err
		}
		r.next()
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

// next receives one message of the copy.
func (r *copyReader) next() {
	msg, err := r.c.be.Receive()
	if err != nil {
		r.done, r.broken, r.err = true, true, fmt.Errorf("pgwire: COPY data: %w", err)
		return
	}
	switch m := msg.(type) {
	case *pgproto3.CopyData:
		r.buf = append(r.buf[:0], m.Data...)
	case *pgproto3.CopyDone:
		r.done, r.err = true, io.EOF
	case *pgproto3.CopyFail:
		r.done, r.err = true, sqlerr.New(sqlerr.QueryCanceled, "COPY from stdin failed: %s", m.Message)
	case *pgproto3.Flush, *pgproto3.Sync:
		// Ignored during COPY, as PostgreSQL does.
	default:
		r.done, r.err = true, sqlerr.New(sqlerr.ProtocolViolation, "unexpected message type %s during COPY from stdin", typeName(msg))
	}
}

// endCopy discards what the client still sends of a COPY the statement
// stopped reading (it failed), as PostgreSQL does, so that the stream is
// in step again. false: the connection failed.
func (c *conn) endCopy() bool {
	r := c.copying
	c.copying = nil
	if r == nil {
		return true
	}
	for !r.done {
		r.buf = r.buf[:0]
		r.next()
	}
	return !r.broken
}

// copyOut starts a COPY TO STDOUT: each Write is one CopyData, Close
// sends CopyDone.
func (c *conn) copyOut(format int16, columns int) (io.WriteCloser, error) {
	if err := c.send(&pgproto3.CopyOutResponse{OverallFormat: byte(format), ColumnFormatCodes: copyFormats(format, columns)}); err != nil {
		return nil, err
	}
	return copyWriter{c}, nil
}

type copyWriter struct{ c *conn }

func (w copyWriter) Write(p []byte) (int, error) {
	if err := w.c.send(&pgproto3.CopyData{Data: p}); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w copyWriter) Close() error { return w.c.send(&pgproto3.CopyDone{}) }

var (
	_ result.Copier = (*resultWriter)(nil)
	_ result.Copier = (*portalWriter)(nil)
)

func (w *resultWriter) CopyIn(format int16, columns int) (io.Reader, error) {
	return w.c.copyIn(format, columns)
}

func (w *resultWriter) CopyOut(format int16, columns int) (io.WriteCloser, error) {
	return w.c.copyOut(format, columns)
}

func (w *portalWriter) CopyIn(format int16, columns int) (io.Reader, error) {
	return w.c.copyIn(format, columns)
}

func (w *portalWriter) CopyOut(format int16, columns int) (io.WriteCloser, error) {
	return w.c.copyOut(format, columns)
}
