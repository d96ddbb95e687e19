package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"certa/engine/sqlite"
	"certa/internal/mysqlclient"
	"certa/internal/pgclient"
)

// Presets are the targets `certa bench --target NAME` knows by name: where
// `certa up` and the scripts in bench/peers start them. certa-pg is a
// cluster on the PostgreSQL engine beside the default one:
// `certa up --engine postgres --port-base 6433 --data-dir certa-pg-data`.
var Presets = map[string]string{
	"certa":    "certa:127.0.0.1:5433,127.0.0.1:5434,127.0.0.1:5435",
	"certa-pg": "certa:127.0.0.1:6433,127.0.0.1:6434,127.0.0.1:6435",
	"galera":   "mysql:127.0.0.1:13306,127.0.0.1:13307,127.0.0.1:13308",
	"mariadb":  "mysql:127.0.0.1:13406",
	"postgres": "postgres:127.0.0.1:15432",
	"sqlite":   "sqlite:",
}

// Protocol is how clients send statements to a server target.
type Protocol string

const (
	// ProtocolPrepared prepares each statement once per connection and
	// then sends only its arguments (PostgreSQL's extended protocol, MySQL's
	// binary protocol): what sysbench, pgx and JDBC do by default.
	ProtocolPrepared Protocol = "prepared"
	// ProtocolSimple sends each statement as text with its arguments
	// written in by the client, as psql and scripts do.
	ProtocolSimple Protocol = "simple"
)

// ParseTarget reads a target: a preset name, or NAME=KIND:ADDR[,ADDR...]
// where KIND is certa (ADDR host:port), postgres or mysql (ADDR host:port,
// user, password and database bench, or a postgres:// or mysql:// URL), or
// sqlite (ADDR a file, empty for a temporary one; it always prepares).
func ParseTarget(spec string, p Protocol) (Target, error) {
	if p != ProtocolPrepared && p != ProtocolSimple {
		return nil, fmt.Errorf("bench: unknown protocol %q (prepared, simple)", p)
	}
	name, def, ok := strings.Cut(spec, "=")
	if !ok {
		def, ok = Presets[spec]
		if !ok {
			return nil, fmt.Errorf("bench: unknown target %q: name a preset (certa, certa-pg, galera, mariadb, postgres, sqlite) or write NAME=KIND:ADDR[,ADDR...]", spec)
		}
	}
	kind, list, ok := strings.Cut(def, ":")
	if !ok {
		return nil, fmt.Errorf("bench: target %q: want KIND:ADDR[,ADDR...]", spec)
	}
	var addrs []string
	if list != "" {
		addrs = strings.Split(list, ",")
	}
	switch kind {
	case "certa", "postgres":
		if len(addrs) == 0 {
			return nil, fmt.Errorf("bench: target %q names no address", spec)
		}
		return &pgTarget{name: name, certa: kind == "certa", addrs: addrs, protocol: p}, nil
	case "mysql":
		if len(addrs) == 0 {
			return nil, fmt.Errorf("bench: target %q names no address", spec)
		}
		return &mysqlTarget{name: name, addrs: addrs, protocol: p}, nil
	case "sqlite":
		return openSQLiteTarget(name, list)
	}
	return nil, fmt.Errorf("bench: target %q: unknown kind %q (certa, postgres, mysql, sqlite)", spec, kind)
}

// pgTarget is a certa cluster or a PostgreSQL server, over the PostgreSQL
// protocol.
type pgTarget struct {
	name      string
	certa     bool
	addrs     []string
	protocol  Protocol
	isolation string // SetIsolation
}

// SetIsolation makes every session of t ask for transaction isolation
// level (a level of SQL's: serializable, repeatable read, read
// committed); "" leaves the system's default. SQLite runs every
// transaction serializable and takes none.
func SetIsolation(t Target, level string) error {
	switch level {
	case "", "serializable", "repeatable read", "read committed":
	default:
		return fmt.Errorf("bench: unknown isolation level %q (serializable, repeatable read, read committed)", level)
	}
	switch t := t.(type) {
	case *pgTarget:
		t.isolation = level
	case *mysqlTarget:
		t.isolation = level
	}
	return nil
}

// AtIsolation returns a copy of t whose sessions ask for level (as
// SetIsolation), named NAME@level: to run one system at several levels
// side by side. A SQLite target, whose transactions are all serializable,
// is returned as it is, with ok false.
func AtIsolation(t Target, level string) (variant Target, ok bool, err error) {
	switch t := t.(type) {
	case *pgTarget:
		v := *t
		v.name += "@" + level
		return &v, true, SetIsolation(&v, level)
	case *mysqlTarget:
		v := *t
		v.name += "@" + level
		return &v, true, SetIsolation(&v, level)
	}
	return t, false, nil
}

func (t *pgTarget) Name() string { return t.name }
func (t *pgTarget) Nodes() int   { return len(t.addrs) }

func (t *pgTarget) Open(ctx context.Context, node int, consistency string) (Conn, error) {
	addr := t.addrs[node%len(t.addrs)]
	switch {
	case strings.Contains(addr, "://"):
	case t.certa:
		addr = "postgres://certa@" + addr + "/certa?sslmode=disable"
	default:
		addr = "postgres://bench:bench@" + addr + "/bench?sslmode=disable"
	}
	connect := pgclient.ConnectExtended
	if t.protocol == ProtocolSimple {
		connect = pgclient.ConnectString
	}
	c, err := connect(ctx, addr)
	if err != nil {
		return nil, fmt.Errorf("%s: connect to %s: %w", t.name, addr, err)
	}
	if t.certa {
		if _, err := c.Exec(ctx, "SET certa.consistency = '"+consistency+"'"); err != nil {
			c.Close()
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
	}
	if t.isolation != "" {
		if _, err := c.Exec(ctx, "SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL "+t.isolation); err != nil {
			c.Close()
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
	}
	return pgConn{c}, nil
}

func (t *pgTarget) IsConflict(err error) bool {
	code := pgclient.SQLState(err)
	return code == "40001" || code == "40P01"
}

func (t *pgTarget) Durability() string {
	if t.certa {
		return "every commit in the Raft log, fsync'd on a majority of nodes"
	}
	return "as the server is configured (bench/peers: synchronous_commit=on, fsync=on)"
}

func (t *pgTarget) Close() {}

type pgConn struct{ c *pgclient.Conn }

func (p pgConn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	tag, err := p.c.Exec(ctx, sql, args...)
	if err != nil {
		return 0, err
	}
	// The tag ends in the row count: "UPDATE 1", "INSERT 0 1".
	n, _ := strconv.ParseInt(tag[strings.LastIndexByte(tag, ' ')+1:], 10, 64)
	return n, nil
}

func (p pgConn) Query(ctx context.Context, sql string, args ...any) ([][]any, error) {
	return p.c.QueryText(ctx, sql, args...)
}

func (p pgConn) Close() { p.c.Close() }

// mysqlTarget is a MariaDB server or MariaDB Galera cluster.
type mysqlTarget struct {
	name      string
	addrs     []string
	protocol  Protocol
	isolation string // SetIsolation
}

func (t *mysqlTarget) Name() string { return t.name }
func (t *mysqlTarget) Nodes() int   { return len(t.addrs) }

func (t *mysqlTarget) Open(ctx context.Context, node int, consistency string) (Conn, error) {
	addr := t.addrs[node%len(t.addrs)]
	if !strings.Contains(addr, "://") {
		addr = "mysql://bench:bench@" + addr + "/bench"
	}
	c, err := mysqlclient.Connect(ctx, addr, t.protocol == ProtocolPrepared)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	if len(t.addrs) > 1 {
		// Galera: sync makes a read wait until the node applied everything
		// the cluster committed before it.
		wait := "0"
		if consistency == ConsistencySync {
			wait = "1"
		}
		if _, err := c.Exec(ctx, "SET SESSION wsrep_sync_wait = "+wait); err != nil {
			c.Close()
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
	}
	if t.isolation != "" {
		if _, err := c.Exec(ctx, "SET SESSION TRANSACTION ISOLATION LEVEL "+t.isolation); err != nil {
			c.Close()
			return nil, fmt.Errorf("%s: %w", t.name, err)
		}
	}
	return mysqlConn{c}, nil
}

func (t *mysqlTarget) IsConflict(err error) bool {
	switch mysqlclient.ErrorNumber(err) {
	case 1213, // deadlock, and Galera's certification failure
		1205, // lock wait timeout
		1020: // record changed since it was read
		return true
	}
	return false
}

func (t *mysqlTarget) Durability() string {
	if len(t.addrs) > 1 {
		return "every commit certified by the cluster and fsync'd on the node it ran on (bench/peers: innodb_flush_log_at_trx_commit=1, sync_binlog=1)"
	}
	return "every commit fsync'd (bench/peers: innodb_flush_log_at_trx_commit=1, sync_binlog=1)"
}

func (t *mysqlTarget) Close() {}

type mysqlConn struct{ c *mysqlclient.Conn }

func (m mysqlConn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	return m.c.Exec(ctx, sql, args...)
}

func (m mysqlConn) Query(ctx context.Context, sql string, args ...any) ([][]any, error) {
	return m.c.Query(ctx, sql, args...)
}

func (m mysqlConn) Close() { m.c.Close() }

// sqliteTarget is the no-replication baseline: a local SQLite file in WAL
// mode with synchronous=FULL, one connection per client. SQLite runs one
// writer at a time, so transactions begin IMMEDIATE (taking the write lock
// at BEGIN: a deferred one that later writes could deadlock), and FOR UPDATE,
// which SQLite does not know, is dropped (the write lock covers it).
type sqliteTarget struct {
	name string
	path string
	temp string // a temporary directory to remove, if any
}

func openSQLiteTarget(name, path string) (*sqliteTarget, error) {
	t := &sqliteTarget{name: name, path: path}
	if path == "" {
		dir, err := os.MkdirTemp("", "certa-bench-")
		if err != nil {
			return nil, err
		}
		t.temp, t.path = dir, filepath.Join(dir, "baseline.db")
	}
	return t, nil
}

func (t *sqliteTarget) Name() string { return t.name }
func (t *sqliteTarget) Nodes() int   { return 1 }

func (t *sqliteTarget) Open(ctx context.Context, node int, consistency string) (Conn, error) {
	db, err := sqlite.OpenBaseline(t.path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.name, err)
	}
	return sqliteConn{db}, nil
}

func (t *sqliteTarget) IsConflict(err error) bool { return sqlite.IsBusy(err) }

func (t *sqliteTarget) Durability() string {
	return "every commit fsync'd (WAL, synchronous=FULL), one node"
}

func (t *sqliteTarget) Close() {
	if t.temp != "" {
		os.RemoveAll(t.temp)
	}
}

type sqliteConn struct{ db *sqlite.Baseline }

func (s sqliteConn) Exec(ctx context.Context, sql string, args ...any) (int64, error) {
	if sql == "BEGIN" {
		sql = "BEGIN IMMEDIATE"
	}
	return s.db.Exec(sql, args...)
}

func (s sqliteConn) Query(ctx context.Context, sql string, args ...any) ([][]any, error) {
	return s.db.Query(strings.TrimSuffix(sql, " FOR UPDATE"), args...)
}

func (s sqliteConn) Close() { s.db.Close() }
