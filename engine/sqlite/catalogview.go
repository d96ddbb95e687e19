package sqlite

import (
	"fmt"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
)

// readCatalogViews adds the views to tables (readCatalogTables'), with
// oids after theirs and their indexes'. A view's definition is the one
// its statement keeps (pgparse.ViewDefinition); a view made by an older
// certa, which ran the client's statement as written, shows its query.
func readCatalogViews(c *conn, schema string, tables []*catalogTable, next int64) ([]*catalogTable, error) {
	for _, t := range tables {
		next = max(next, t.oid+1)
		for _, ix := range t.indexes {
			next = max(next, ix.oid+1)
		}
	}
	var views []*catalogTable
	err := execResult(c.c, "SELECT name, sql FROM "+schema+".sqlite_schema WHERE type = 'view' ORDER BY name", func(s *sqlite.Stmt) {
		def := viewDefinition(s.ColumnText(1))
		views = append(views, &catalogTable{name: s.ColumnText(0), view: def, reads: pgparse.ViewRelations(def)})
	})
	if err != nil {
		return nil, err
	}
	for _, v := range views {
		v.oid = next
		next++
		err := execResult(c.c, "SELECT name, type FROM pragma_table_info(?1, ?2) ORDER BY cid", func(s *sqlite.Stmt) {
			v.cols = append(v.cols, catalogColumn{name: s.ColumnText(0), decl: s.ColumnText(1)})
		}, v.name, schema)
		if err != nil {
			return nil, err
		}
		viewKinds(v)
	}
	return append(tables, views...), nil
}

// viewKinds gives the columns of view v that SQLite declares no type
// (computed ones) the kind its query says (a cast, a boolean), as
// PostgreSQL's catalog types every column of a view; the rest stay text.
func viewKinds(v *catalogTable) {
	printed, err := pgparse.ToSQLite(v.view)
	if err != nil || len(printed.Columns) != len(v.cols) {
		return
	}
	for i, col := range printed.Columns {
		if v.cols[i].decl != "" || col.Cast == "" {
			continue
		}
		decl := castResults[col.Cast].name
		switch {
		case len(col.Mods) == 1 && (decl == "varchar" || decl == "numeric"):
			decl = fmt.Sprintf("%s(%d)", decl, col.Mods[0])
		case len(col.Mods) == 2 && decl == "numeric":
			decl = fmt.Sprintf("numeric(%d,%d)", col.Mods[0], col.Mods[1])
		}
		v.cols[i].decl = decl
	}
}

// viewDefinition is the query of the view sqlite makes (its statement in
// sqlite_schema) as the catalog shows it: the definition it keeps, or
// what a view made by an older certa ran as written.
func viewDefinition(sqlite string) string {
	if def, ok := pgparse.ViewDefinition(sqlite); ok {
		return def
	}
	_, def, _ := strings.Cut(sqlite, " AS ")
	return def
}

// fillView writes view v: its relation, columns, _RETURN rule, and the
// rule's dependencies on the relations it reads (byName), which pg_dump
// follows to make those first.
func fillView(w *rowWriter, db *catalogDB, v *catalogTable, byName map[string]*catalogTable) {
	w.row("pg_class", v.inSchema(relation(v.oid, v.name, "v", len(v.cols), map[string]any{"relhasrules": 1})))
	w.row("pg_views", map[string]any{"schemaname": v.schema(), "viewname": v.name, "viewowner": "certa", "definition": " " + v.view + ";"})
	w.row("information_schema.tables", map[string]any{"table_catalog": "certa", "table_schema": v.schema(),
		"table_name": v.name, "table_type": v.tableType(), "is_insertable_into": "NO", "is_typed": "NO"})
	w.row("information_schema.views", map[string]any{"table_catalog": "certa", "table_schema": v.schema(), "table_name": v.name,
		"view_definition": " " + v.view + ";", "check_option": "NONE", "is_updatable": "NO", "is_insertable_into": "NO",
		"is_trigger_updatable": "NO", "is_trigger_deletable": "NO", "is_trigger_insertable_into": "NO"})
	fillColumns(w, v, nil)
	db.viewDefs[v.oid] = " " + v.view + ";"
	rule := v.oid*1000 + 999
	w.row("pg_rewrite", map[string]any{"oid": rule, "rulename": "_RETURN", "ev_class": v.oid, "ev_type": "1",
		"ev_enabled": "O", "is_instead": 1})
	w.row("pg_depend", map[string]any{"classid": oidPgRewrite, "objid": rule, "objsubid": 0, "refclassid": oidPgClass,
		"refobjid": v.oid, "refobjsubid": 0, "deptype": "i"})
	for _, name := range v.reads {
		if r := byName[strings.ToLower(name)]; r != nil && r != v {
			w.row("pg_depend", map[string]any{"classid": oidPgRewrite, "objid": rule, "objsubid": 0, "refclassid": oidPgClass,
				"refobjid": r.oid, "refobjsubid": 0, "deptype": "n"})
		}
	}
}
