package bench

import (
	"context"

	"certa/engine/sqlite"
	"certa/internal/pgclient"
)

// Cluster is a certa cluster (or any PostgreSQL server) reached over the
// PostgreSQL protocol; client i connects to Addrs[i % len(Addrs)].
type Cluster struct{ Addrs []string }

// Open implements Target.
func (c Cluster) Open(ctx context.Context, i int) (Client, error) {
	conn, err := pgclient.Connect(ctx, c.Addrs[i%len(c.Addrs)])
	if err != nil {
		return nil, err
	}
	return pgClient{conn}, nil
}

// IsConflict implements Target.
func (Cluster) IsConflict(err error) bool { return pgclient.SQLState(err) == "40001" }

type pgClient struct{ c *pgclient.Conn }

func (p pgClient) Exec(ctx context.Context, sql string, args ...any) error {
	_, err := p.c.Exec(ctx, sql, args...)
	return err
}

func (p pgClient) Close() { p.c.Close() }

// SQLiteFile is the no-replication baseline: one local SQLite file in WAL
// mode with synchronous=FULL (every commit fsync'd). SQLite has one writer,
// so its clients share one connection in turn.
type SQLiteFile struct {
	db *sqlite.Baseline
}

// OpenSQLiteFile opens (creating) the baseline database at path.
func OpenSQLiteFile(path string) (*SQLiteFile, error) {
	db, err := sqlite.OpenBaseline(path)
	if err != nil {
		return nil, err
	}
	return &SQLiteFile{db: db}, nil
}

// Close closes the database.
func (s *SQLiteFile) Close() { s.db.Close() }

// Open implements Target.
func (s *SQLiteFile) Open(ctx context.Context, i int) (Client, error) { return sqliteClient{s}, nil }

// IsConflict implements Target.
func (*SQLiteFile) IsConflict(error) bool { return false }

type sqliteClient struct{ s *SQLiteFile }

func (c sqliteClient) Exec(ctx context.Context, sql string, args ...any) error {
	return c.s.db.Exec(sql, args...)
}

func (sqliteClient) Close() {}
