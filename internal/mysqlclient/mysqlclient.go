// Package mysqlclient is the MySQL-protocol client `certa bench` uses to
// measure MariaDB and MariaDB Galera side by side with certa. It is the
// only package of ours that imports a MySQL driver.
package mysqlclient

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-sql-driver/mysql"
)

// Conn is one client connection. Statements are written with PostgreSQL's
// $1, $2 ... placeholders, as the rest of certa writes them; Conn rewrites
// them to MySQL's ?.
type Conn struct {
	db       *sql.DB
	c        *sql.Conn
	prepared map[string]*sql.Stmt // nil: arguments interpolated by the client
}

// Connect connects to a MySQL-protocol server. dsn is a URL,
// mysql://user:password@host:port/database. With prepare, a statement with
// arguments is prepared on the server the first time it runs and executed
// with its arguments from then on (the binary protocol); without, the
// client writes the arguments into the text. Either way a statement is one
// round trip once prepared.
func Connect(ctx context.Context, dsn string, prepare bool) (*Conn, error) {
	cfg, err := parseURL(dsn)
	if err != nil {
		return nil, err
	}
	cfg.InterpolateParams = !prepare
	connector, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(connector)
	db.SetMaxOpenConns(1)
	c, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("mysql %s: %w", cfg.Addr, err)
	}
	conn := &Conn{db: db, c: c}
	if prepare {
		conn.prepared = make(map[string]*sql.Stmt)
	}
	return conn, nil
}

// stmt returns query prepared on the server, or nil to send it as text (no
// arguments, or not preparing).
func (c *Conn) stmt(ctx context.Context, query string, args []any) (*sql.Stmt, error) {
	if c.prepared == nil || len(args) == 0 {
		return nil, nil
	}
	if s := c.prepared[query]; s != nil {
		return s, nil
	}
	s, err := c.c.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	c.prepared[query] = s
	return s, nil
}

// parseURL turns mysql://user:password@host:port/database into the
// driver's configuration.
func parseURL(dsn string) (*mysql.Config, error) {
	rest, ok := strings.CutPrefix(dsn, "mysql://")
	if !ok {
		return nil, fmt.Errorf("mysql: %q is not a mysql:// URL", dsn)
	}
	cfg := mysql.NewConfig()
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		cfg.User, cfg.Passwd, _ = strings.Cut(rest[:at], ":")
		rest = rest[at+1:]
	}
	cfg.Addr, cfg.DBName, _ = strings.Cut(rest, "/")
	if cfg.Addr == "" {
		return nil, fmt.Errorf("mysql: %q names no host", dsn)
	}
	cfg.Net = "tcp"
	return cfg, nil
}

// Exec runs a statement and returns how many rows it changed.
func (c *Conn) Exec(ctx context.Context, query string, args ...any) (int64, error) {
	query, args, err := placeholders(query, args)
	if err != nil {
		return 0, err
	}
	s, err := c.stmt(ctx, query, args)
	if err != nil {
		return 0, err
	}
	var res sql.Result
	if s != nil {
		res, err = s.ExecContext(ctx, args...)
	} else {
		res, err = c.c.ExecContext(ctx, query, args...)
	}
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// Query runs a query and returns its rows, each value as text ([]byte) or nil.
func (c *Conn) Query(ctx context.Context, query string, args ...any) ([][]any, error) {
	query, args, err := placeholders(query, args)
	if err != nil {
		return nil, err
	}
	s, err := c.stmt(ctx, query, args)
	if err != nil {
		return nil, err
	}
	var rows *sql.Rows
	if s != nil {
		rows, err = s.QueryContext(ctx, args...)
	} else {
		rows, err = c.c.QueryContext(ctx, query, args...)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rows.Next() {
		raw := make([]sql.RawBytes, len(cols))
		ptrs := make([]any, len(cols))
		for i := range raw {
			ptrs[i] = &raw[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		row := make([]any, len(cols))
		for i, b := range raw {
			if b != nil {
				row[i] = []byte(strings.Clone(string(b)))
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// Close closes the connection.
func (c *Conn) Close() error {
	for _, s := range c.prepared {
		s.Close()
	}
	c.c.Close()
	return c.db.Close()
}

// ErrorNumber returns the server's error number, or 0 if err is not a
// server error.
func ErrorNumber(err error) uint16 {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number
	}
	return 0
}

// placeholders rewrites $1, $2 ... to ? and orders the arguments as the ?s
// take them ($2 before $1, or $1 twice, is fine). Queries hold no $ in
// literals: certa's own workloads pass every value as an argument.
func placeholders(query string, args []any) (string, []any, error) {
	if !strings.Contains(query, "$") {
		return query, args, nil
	}
	var b strings.Builder
	var ordered []any
	for i := 0; i < len(query); i++ {
		if query[i] == '$' {
			j := i + 1
			for j < len(query) && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if n, err := strconv.Atoi(query[i+1 : j]); err == nil {
				if n < 1 || n > len(args) {
					return "", nil, fmt.Errorf("mysql: $%d in a statement with %d arguments", n, len(args))
				}
				b.WriteByte('?')
				ordered = append(ordered, args[n-1])
				i = j - 1
				continue
			}
		}
		b.WriteByte(query[i])
	}
	return b.String(), ordered, nil
}
