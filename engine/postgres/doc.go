// Package postgres is certa's engine over a real PostgreSQL server, one per
// node (issue 18). DESIGN.md in this directory is the plan; what exists so
// far is its core: the objects certa keeps in each database (schema.go),
// write-set capture by row triggers (capture.go), the encoding of the rows
// a write set carries (rows.go), their apply on other nodes (apply.go) and
// the applier of a batch of certified write sets (applier.go), over a
// server that pgproc runs. The engine.Engine around them comes next.
//
// This is the one package of certa that talks to PostgreSQL servers as a
// client (through jackc/pgx's pgconn).
package postgres
