// Package postgres is certa's engine over a real PostgreSQL server, one per
// node: engine.Engine over one database, which passes the conformance suite
// (engine/enginetest). Clients' transactions run on pooled backends as the
// role certa_client; row triggers capture what they change (capture.go);
// the origin's transaction commits at its position in the log
// (position.go) and the other nodes apply the rows (applier.go, apply.go)
// and schema statements (schemachange.go) as certa_applier, a role without
// superuser. DESIGN.md in this directory is the design; docs/architecture.md
// maps the files.
//
// This is the one package of certa that talks to the nodes' PostgreSQL
// servers as a client (through jackc/pgx's pgconn).
package postgres
