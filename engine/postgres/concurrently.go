package postgres

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/pgparse"
	"certa/sqlerr"
)

// A schema change with CONCURRENTLY runs without it (pgparse.Concurrently),
// in a transaction on every node. What PostgreSQL would refuse to do
// concurrently is refused first, with PostgreSQL's own message: the trial
// (checkSchemaChange) looks up the relation the statement names, under the
// session's settings, before it runs the statement.

// concurrentlyRefusedSQL answers PostgreSQL's SQLSTATE and message for a
// statement of kind $1 (pgparse.Concurrently.Kind) on relation $2 (RelName
// $3) that it does not run concurrently, or no row.
const concurrentlyRefusedSQL = `SELECT r.* FROM pg_catalog.pg_class c, LATERAL (
	SELECT '0A000', pg_catalog.format('cannot create index on partitioned table "%s" concurrently', c.relname)
		WHERE $1 = 'index on' AND c.relkind = 'p'
	UNION ALL SELECT '0A000', pg_catalog.format('cannot drop partitioned index "%s" concurrently', $3::text)
		WHERE $1 = 'drop index' AND c.relkind = 'I' AND c.relpersistence <> 't'
	UNION ALL SELECT '55000', 'cannot detach partitions concurrently when a default partition exists'
		WHERE $1 = 'detach from' AND EXISTS (SELECT FROM pg_catalog.pg_partitioned_table p WHERE p.partrelid = c.oid AND p.partdefid <> 0)) r
	WHERE c.oid = pg_catalog.to_regclass($2) AND $2 <> ''`

// refuseConcurrently returns PostgreSQL's error if it would not
// run cc concurrently, looking on c, else nil. A relation that does not
// resolve is left to the statement's own error.
func refuseConcurrently(ctx context.Context, c *pgconn.PgConn, cc pgparse.Concurrently) error {
	if cc.Refusal != "" {
		return sqlerr.New(sqlerr.FeatureNotSupported, "%s", cc.Refusal)
	}
	r := c.ExecParams(ctx, concurrentlyRefusedSQL, [][]byte{[]byte(cc.Kind), []byte(cc.Relation), []byte(cc.RelName)}, nil, nil, nil).Read()
	if r.Err != nil {
		return r.Err
	}
	if len(r.Rows) > 0 {
		return sqlerr.New(string(r.Rows[0][0]), "%s", r.Rows[0][1])
	}
	return nil
}
