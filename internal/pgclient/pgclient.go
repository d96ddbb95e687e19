// Package pgclient is the PostgreSQL client certa's own tools and tests use
// (certa bench, the cluster tests): a thin layer over pgx, the only package
// of ours that imports it.
package pgclient

import (
	"context"
	"crypto/tls"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/stdlib"
)

// Conn is one client connection.
type Conn struct {
	c    *pgx.Conn
	text pgx.QueryResultFormats // results in text, for QueryText
}

// Connect connects to a certa node (or any PostgreSQL server) at host:port.
// It uses the simple query protocol, with arguments interpolated by the client.
func Connect(ctx context.Context, addr string) (*Conn, error) {
	return connect(ctx, fmt.Sprintf("postgres://certa@%s/certa?sslmode=disable", addr), pgx.QueryExecModeSimpleProtocol)
}

// ConnectExtended connects with a connection string as pgx does by
// default: the extended query protocol, statements prepared once per
// connection and cached, parameters and results in binary format where the
// type allows.
func ConnectExtended(ctx context.Context, connString string) (*Conn, error) {
	return connect(ctx, connString, pgx.QueryExecModeCacheStatement)
}

// ConnectString connects with a libpq connection string (a URL or
// key=value pairs: password, sslmode, sslrootcert...), using the simple
// query protocol like Connect.
func ConnectString(ctx context.Context, connString string) (*Conn, error) {
	return connect(ctx, connString, pgx.QueryExecModeSimpleProtocol)
}

func connect(ctx context.Context, connString string, mode pgx.QueryExecMode) (*Conn, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	cfg.DefaultQueryExecMode = mode
	c, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	conn := &Conn{c: c}
	if mode != pgx.QueryExecModeSimpleProtocol {
		conn.text = pgx.QueryResultFormats{pgx.TextFormatCode}
	}
	return conn, nil
}

// OpenDB opens a database/sql pool through pgx's stdlib driver (extended
// protocol, as applications using database/sql connect). A cancelled
// context sends a CancelRequest, so the server stops the statement.
func OpenDB(connString string) (*sql.DB, error) {
	cfg, err := pgx.ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	cfg.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 10 * time.Second}
	}
	return stdlib.OpenDB(*cfg), nil
}

// Exec runs sql and returns its command tag.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (string, error) {
	tag, err := c.c.Exec(ctx, sql, args...)
	return tag.String(), err
}

// CopyFrom copies rows into table's columns with COPY FROM STDIN in
// binary format, as pgx does, and returns how many it copied.
func (c *Conn) CopyFrom(ctx context.Context, table string, columns []string, rows [][]any) (int64, error) {
	return c.c.CopyFrom(ctx, pgx.Identifier{table}, columns, pgx.CopyFromRows(rows))
}

// Query runs sql and returns all rows, each value as pgx decodes it
// (int64, float64, string, []byte, bool or nil).
func (c *Conn) Query(ctx context.Context, sql string, args ...any) ([][]any, error) {
	return c.collect(ctx, sql, args, pgx.Rows.Values)
}

// QueryText runs sql and returns all rows, each value the text the server
// sent (a string) or nil for NULL. It decodes nothing, so it is cheap.
func (c *Conn) QueryText(ctx context.Context, sql string, args ...any) ([][]any, error) {
	if c.text != nil {
		args = append([]any{c.text}, args...)
	}
	return c.collect(ctx, sql, args, func(rows pgx.Rows) ([]any, error) {
		raw := rows.RawValues()
		row := make([]any, len(raw))
		for i, b := range raw {
			if b != nil {
				row[i] = string(b)
			}
		}
		return row, nil
	})
}

// Described is a result with its columns: names and type OIDs as the
// server described them, and rows as QueryText returns them.
type Described struct {
	Names []string
	OIDs  []uint32
	Rows  [][]any
}

// QueryDescribed runs sql and returns its result with its columns.
func (c *Conn) QueryDescribed(ctx context.Context, sql string, args ...any) (*Described, error) {
	if c.text != nil {
		args = append([]any{c.text}, args...)
	}
	rows, err := c.c.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	d := &Described{}
	for _, f := range rows.FieldDescriptions() {
		d.Names = append(d.Names, f.Name)
		d.OIDs = append(d.OIDs, f.DataTypeOID)
	}
	for rows.Next() {
		raw := rows.RawValues()
		row := make([]any, len(raw))
		for i, b := range raw {
			if b != nil {
				row[i] = string(b)
			}
		}
		d.Rows = append(d.Rows, row)
	}
	return d, rows.Err()
}

// collect runs sql and turns every row into values with row.
func (c *Conn) collect(ctx context.Context, sql string, args []any, row func(pgx.Rows) ([]any, error)) ([][]any, error) {
	rows, err := c.c.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v, err := row(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// Int64 converts an integer value of Query's rows (int16, int32 or int64,
// by the column's type) to int64; ok is false for anything else.
func Int64(v any) (n int64, ok bool) {
	switch x := v.(type) {
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// QueryInt runs sql, which must return one row of one integer column.
func (c *Conn) QueryInt(ctx context.Context, sql string, args ...any) (int64, error) {
	var v int64
	err := c.c.QueryRow(ctx, sql, args...).Scan(&v)
	return v, err
}

// QueryString runs sql, which must return one row of one column, as text.
func (c *Conn) QueryString(ctx context.Context, sql string, args ...any) (string, error) {
	var v string
	err := c.c.QueryRow(ctx, sql, args...).Scan(&v)
	return v, err
}

// QueryRow runs sql, which must return one row, and scans it into dest
// (pointers, as pgx's Scan takes).
func (c *Conn) QueryRow(ctx context.Context, sql string, args []any, dest ...any) error {
	return c.c.QueryRow(ctx, sql, args...).Scan(dest...)
}

// Cancel asks the server, on a connection of its own, to cancel the
// statement c is running (PostgreSQL's CancelRequest).
func (c *Conn) Cancel(ctx context.Context) error { return c.c.PgConn().CancelRequest(ctx) }

// TLS reports whether the connection runs over TLS.
func (c *Conn) TLS() bool {
	_, ok := c.c.PgConn().Conn().(*tls.Conn)
	return ok
}

// ParameterStatus returns the value of a parameter the server reported
// (ParameterStatus), "" if none.
func (c *Conn) ParameterStatus(name string) string { return c.c.PgConn().ParameterStatus(name) }

// Close closes the connection.
func (c *Conn) Close() error { return c.c.Close(context.Background()) }

// SQLState returns the SQLSTATE of a server error, or "" if err is not one.
func SQLState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// ErrorFields returns the SQLSTATE, message, detail and hint of a server's
// error ("" for any other error).
func ErrorFields(err error) (code, message, detail, hint string) {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code, pe.Message, pe.Detail, pe.Hint
	}
	return "", "", "", ""
}
