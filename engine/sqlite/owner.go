package sqlite

import (
	"context"

	"certa/pgparse"
	"certa/result"
	"certa/sqlerr"
)

// ExecLocal implements engine.Tx. A statement that makes, drops or
// empties the session's temporary tables, views and indexes runs here
// (temp.go), and one that changes nothing this engine keeps: ALTER ...
// OWNER TO, which pg_dump writes after each object it makes. certa has no
// roles (every user may do everything), so an object's owner would mean
// nothing; the statement checks that the object exists, as PostgreSQL
// does, and runs on this node alone. Any other statement returns false.
func (tx *Tx) ExecLocal(ctx context.Context, sql string, w result.Writer) (bool, error) {
	tx.mu.Lock()
	defer tx.mu.Unlock()
	if err := tx.usable(); err != nil {
		return true, err
	}
	if ran, err := tx.execTemp(ctx, sql, w); ran || err != nil {
		return ran, err
	}
	oc, ok := pgparse.ParseOwnerChange(sql)
	if !ok {
		return false, nil
	}
	if err := tx.ownedExists(oc); err != nil {
		return true, err
	}
	return true, w.Complete(pgparse.SchemaTag(sql))
}

// ownedExists checks that the object of an OWNER TO exists. tx.mu is held.
func (tx *Tx) ownedExists(oc pgparse.OwnerChange) error {
	if oc.Kind == "SCHEMA" {
		oc.Schema = oc.Name
	}
	if oc.Schema != "" && oc.Schema != "public" {
		return sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", oc.Schema)
	}
	// ALTER TABLE takes any relation, as PostgreSQL's does for OWNER TO
	// (pg_dump writes it for sequences).
	query := `SELECT 1 FROM sqlite_schema WHERE type IN ('table', 'view') AND name = ?1 COLLATE NOCASE
		UNION ALL SELECT 1 FROM _certa_sequences WHERE name = ?1`
	switch oc.Kind {
	case "SCHEMA":
		return nil
	case "SEQUENCE":
		query = "SELECT 1 FROM _certa_sequences WHERE name = ?1"
	case "VIEW":
		query = "SELECT 1 FROM sqlite_schema WHERE type = 'view' AND name = ?1 COLLATE NOCASE"
	case "INDEX":
		query = "SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = ?1 COLLATE NOCASE"
	case "MATERIALIZED VIEW":
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", oc.Name)
	}
	_, found, err := tx.conn.queryInt(query, oc.Name)
	if err != nil {
		return mapErr(err)
	}
	if !found {
		return sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", oc.Name)
	}
	return nil
}
