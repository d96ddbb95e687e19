package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"

	"certa/pgparse"
)

// errNodeDependent: a schema statement computes values that would differ
// between nodes (pinOrRefuse).
var errNodeDependent = errors.New("schema statement computes values that differ between nodes")

// pinOrRefuse checks a schema statement that ran in the transaction
// open on conn: every node runs it again at its position, so what it
// computes must depend on the rows alone. A column added to a table that
// holds rows, with a default that is not IMMUTABLE (now(),
// gen_random_uuid()), reads the clock or session, or numbers the rows
// (serial, identity), and a new relation's rows computed that way (CREATE
// TABLE AS, SELECT INTO, materialized views), would get other values on
// each node. Where the statement runs first (pin: the trial of one on its
// own, a block's), a default that calls no VOLATILE function gave every
// row one value, which pinOrRefuse reads and pins into the statement it
// returns, the one to replicate (pgparse.PinDefaults). What it cannot pin
// is refused with 0A000 and a hint, as a statement applied (pin false) is
// on every node alike (the same statement at the same position sees the
// same rows and catalog). What is computed is read from the statement's
// parse tree (pgparse.Recomputes); whether a function is IMMUTABLE, and
// whether the table holds rows, from PostgreSQL.
// A column added IF NOT EXISTS that was there before (there, read by
// columnsThere before the statement ran) computes nothing.
//
// A column added whose values cannot be pinned (a VOLATILE default,
// numbered rows) is not refused where its values can travel as rows
// (valuesTravel): pinOrRefuse returns it in travel, and the caller sends
// every row of the table, as the statement left it, after the statement
// (certa.capture_all_rows); the other nodes run the statement, then
// update their rows to the origin's values. Applied (pin false), the
// columns the origin named so (travels) are not refused.
func pinOrRefuse(ctx context.Context, conn *pgconn.PgConn, sql string, pin bool, there map[string]bool, travels []string) (string, travel, error) {
	var out travel
	if pin {
		if err := refuseNarrowSequences(ctx, conn); err != nil { // sequences.go
			return "", travel{}, err
		}
	}
	pins := map[string]*string{}
	for _, r := range pgparse.Recomputes(sql) {
		if r.IfNotExists && there[r.Column] {
			continue
		}
		if r.Type != "" {
			res := conn.ExecParams(ctx, domainDefaultSQL, [][]byte{[]byte(r.Type)}, nil, nil, nil).Read()
			if res.Err != nil {
				return "", travel{}, res.Err
			}
			if len(res.Rows) == 0 {
				continue // not a domain with a default: the column is NULL
			}
			r = r.DomainDefault(string(res.Rows[0][0]))
		}
		why, err := nodeDependence(ctx, conn, r)
		if err != nil {
			return "", travel{}, err
		}
		if why == "" {
			continue // the next part may differ (ADD COLUMN a ..., ADD COLUMN b ...)
		}
		if r.Table != "" {
			has, err := hasRows(ctx, conn, r.Table)
			if err != nil {
				return "", travel{}, err
			}
			if !has {
				continue
			}
		}
		if !pin && r.Added != "" && slices.Contains(travels, r.Added) {
			continue // the origin's values follow as rows
		}
		if pin {
			value, ok, volatile, err := pinnedValue(ctx, conn, r)
			if err != nil {
				return "", travel{}, err
			}
			if ok {
				pins[r.Column] = value
				continue
			}
			if volatile != "" {
				why = fmt.Sprintf("calls %s(), which is VOLATILE", volatile)
			}
			if r.Added != "" {
				stays, err := valuesTravel(ctx, conn, r)
				if err != nil {
					return "", travel{}, err
				}
				if stays == "" {
					out.Table = r.Table
					out.Columns = append(out.Columns, r.Added)
					continue
				}
				e := r.Refusal(why)
				e.Err = errNodeDependent
				e.Detail = "certa would send the values it computes here as rows, but " + stays + "."
				return "", travel{}, e
			}
		}
		e := r.Refusal(why)
		e.Err = errNodeDependent
		return "", travel{}, e
	}
	if len(pins) == 0 {
		return sql, out, nil
	}
	pinned, err := pgparse.PinDefaults(sql, pins)
	return pinned, out, err
}

// travel is what of a schema statement's values goes to the other nodes
// as rows, after the statement (pinOrRefuse).
type travel struct {
	Table   string   // the table whose rows go, as a PostgreSQL name
	Columns []string // the columns added whose values they carry
}

// valuesTravel returns why the values of the column r added cannot
// travel as rows, or "" if they can: the other nodes must find every row
// of the table (and of its partitions and children) by its primary key,
// and the values of their own they compute first must hold as the
// origin's do: the column has no constraint, index or domain constraint
// that could fail there, and it is NOT NULL only if its values cannot be
// NULL (r.NeverNull).
func valuesTravel(ctx context.Context, conn *pgconn.PgConn, r pgparse.Recompute) (string, error) {
	never := "false"
	if r.NeverNull {
		never = "true"
	}
	res := conn.ExecParams(ctx, valuesTravelSQL, [][]byte{[]byte(r.Table), []byte(r.Added), []byte(never)}, nil, nil, nil).Read()
	if res.Err != nil {
		return "", res.Err
	}
	return string(res.Rows[0][0]), nil
}

// valuesTravelSQL is valuesTravel's check of table $1's column $2 ($3: its
// values are never NULL).
const valuesTravelSQL = `WITH RECURSIVE tree (rel) AS (
		SELECT $1::pg_catalog.regclass::pg_catalog.oid
		UNION SELECT i.inhrelid FROM pg_catalog.pg_inherits i JOIN tree ON i.inhparent = tree.rel),
	cols AS (SELECT tree.rel, a.attnum, a.attnotnull, a.atttypid, y.typtype FROM tree
		JOIN pg_catalog.pg_attribute a ON a.attrelid = tree.rel AND a.attname = $2
		JOIN pg_catalog.pg_type y ON y.oid = a.atttypid)
	SELECT CASE
		WHEN EXISTS (SELECT 1 FROM tree JOIN pg_catalog.pg_class c ON c.oid = tree.rel
			WHERE c.relkind = 'r' AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_index x WHERE x.indrelid = c.oid AND x.indisprimary))
			THEN 'the table (or a partition or child of it) has no primary key to find its rows by'
		WHEN EXISTS (WITH RECURSIVE dom (oid) AS (
				SELECT cols.atttypid FROM cols WHERE cols.typtype = 'd'
				UNION SELECT y.typbasetype FROM dom JOIN pg_catalog.pg_type y ON y.oid = dom.oid WHERE y.typtype = 'd')
			SELECT 1 FROM dom JOIN pg_catalog.pg_type y ON y.oid = dom.oid
			WHERE y.typnotnull OR EXISTS (SELECT 1 FROM pg_catalog.pg_constraint k WHERE k.contypid = dom.oid))
			THEN 'the column''s type is a domain with a constraint, which each node would check on values of its own'
		WHEN EXISTS (SELECT 1 FROM cols JOIN pg_catalog.pg_depend d ON d.refclassid = 'pg_catalog.pg_class'::pg_catalog.regclass
				AND d.refobjid = cols.rel AND d.refobjsubid = cols.attnum
			WHERE d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass
				OR d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
					AND EXISTS (SELECT 1 FROM pg_catalog.pg_class i WHERE i.oid = d.objid AND i.relkind IN ('i', 'I')))
			THEN 'the column has a constraint or an index, which each node would check on values of its own'
		WHEN NOT $3::pg_catalog.bool AND EXISTS (SELECT 1 FROM cols WHERE cols.attnotnull)
			THEN 'the column is NOT NULL, and its default may be NULL on another node'
		ELSE '' END`

// columnsThere returns the columns that sql adds IF NOT EXISTS, with a
// default of their own, which their table already has: PostgreSQL skips
// them. Read before sql runs, for pinOrRefuse.
func columnsThere(ctx context.Context, conn *pgconn.PgConn, sql string) (map[string]bool, error) {
	if !strings.Contains(strings.ToUpper(sql), "EXISTS") {
		return nil, nil
	}
	there := map[string]bool{}
	for _, r := range pgparse.Recomputes(sql) {
		if !r.IfNotExists || r.Column == "" {
			continue
		}
		res := conn.ExecParams(ctx, `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_attribute
			WHERE attrelid = pg_catalog.to_regclass($1) AND attname = $2 AND attnum > 0 AND NOT attisdropped)`,
			[][]byte{[]byte(r.Table), []byte(r.Column)}, nil, nil, nil).Read()
		if res.Err != nil {
			return nil, res.Err
		}
		there[r.Column] = string(res.Rows[0][0]) == "t"
	}
	return there, nil
}

// pinnedValue returns the value, as text (nil: NULL), that the column r
// added has in the table's rows, if PostgreSQL gave them all one: its
// default calls no VOLATILE function, reads no row order and numbers
// nothing (r.Column names it). false if it cannot be pinned, with the
// VOLATILE function that prevents it, if that is why.
func pinnedValue(ctx context.Context, conn *pgconn.PgConn, r pgparse.Recompute) (value *string, ok bool, volatile string, err error) {
	if r.Column == "" || r.Numbering || r.Order || r.Catalog || len(r.Unique) > 0 {
		return nil, false, "", nil
	}
	if len(r.Funcs) > 0 {
		names, _ := json.Marshal(r.Funcs)
		res := conn.ExecParams(ctx, volatileSQL, [][]byte{names}, nil, nil, nil).Read()
		if res.Err != nil {
			return nil, false, "", res.Err
		}
		if len(res.Rows) > 0 {
			return nil, false, string(res.Rows[0][0]), nil
		}
	}
	res := conn.ExecParams(ctx, "SELECT pg_catalog.format('SELECT %I::pg_catalog.text FROM %s LIMIT 1', $1::pg_catalog.text, $2::pg_catalog.regclass)",
		[][]byte{[]byte(r.Column), []byte(r.Table)}, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, false, "", res.Err
	}
	res = conn.ExecParams(ctx, string(res.Rows[0][0]), nil, nil, nil, nil).Read()
	if res.Err != nil {
		return nil, false, "", res.Err
	}
	if len(res.Rows) == 0 {
		return nil, false, "", nil // no row it may read (row security)
	}
	if res.Rows[0][0] != nil {
		v := string(res.Rows[0][0])
		value = &v
	}
	return value, true, "", nil
}

// nodeDependence says why r computes values that may differ between
// nodes, or "".
func nodeDependence(ctx context.Context, conn *pgconn.PgConn, r pgparse.Recompute) (string, error) {
	if why := r.Reason(); why != "" {
		return why, nil
	}
	if len(r.Funcs) > 0 {
		names, _ := json.Marshal(r.Funcs)
		res := conn.ExecParams(ctx, nonImmutableSQL, [][]byte{names}, nil, nil, nil).Read()
		if res.Err != nil {
			return "", res.Err
		}
		if len(res.Rows) > 0 {
			return fmt.Sprintf("calls %s(), which is not IMMUTABLE", res.Rows[0][0]), nil
		}
	}
	for _, u := range r.Unique {
		cols, _ := json.Marshal(u.Columns)
		res := conn.ExecParams(ctx, uniqueOrderSQL, [][]byte{[]byte(u.Table), cols}, nil, nil, nil).Read()
		if res.Err != nil {
			return "", res.Err
		}
		if string(res.Rows[0][0]) != "t" {
			return fmt.Sprintf("orders the rows of %s by (%s), on which two rows may tie: which comes first depends on the order this node stores them in",
				u.Table, strings.Join(u.Columns, ", ")), nil
		}
	}
	return "", nil
}

// uniqueOrderSQL tells whether table $1 (a quoted name) has a unique
// index, on plain columns and without a predicate, whose columns are all
// among $2 (a JSON array of names) and never NULL (or NULLS NOT
// DISTINCT): no two of its rows tie on $2's columns.
const uniqueOrderSQL = `SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_index i
	WHERE i.indrelid = pg_catalog.to_regclass($1) AND i.indisunique AND i.indpred IS NULL AND i.indexprs IS NULL
		AND NOT EXISTS (SELECT 1 FROM pg_catalog.unnest(i.indkey) k
			JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k
			WHERE NOT (a.attname = ANY (SELECT pg_catalog.jsonb_array_elements_text($2::pg_catalog.jsonb)))
				OR NOT (a.attnotnull OR i.indnullsnotdistinct)))`

// nonImmutableSQL returns the first of the functions named in $1 (a JSON
// array of names, schema.name or name) of which some overload is not
// IMMUTABLE.
const nonImmutableSQL = `SELECT f FROM pg_catalog.jsonb_array_elements_text($1::pg_catalog.jsonb) AS f
	WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
		WHERE p.provolatile <> 'i' AND (p.proname = f OR n.nspname || '.' || p.proname = f))
	LIMIT 1`

// volatileSQL returns the first of the functions named in $1 (a JSON
// array of names, schema.name or name) of which some overload is
// VOLATILE: it may give each row another value.
const volatileSQL = `SELECT f FROM pg_catalog.jsonb_array_elements_text($1::pg_catalog.jsonb) AS f
	WHERE EXISTS (SELECT 1 FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
		WHERE p.provolatile = 'v' AND (p.proname = f OR n.nspname || '.' || p.proname = f))
	LIMIT 1`

// domainDefaultSQL returns the default of the type named $1 if it is a
// domain that has one, its own or its base domain's.
const domainDefaultSQL = `WITH RECURSIVE d (base, def) AS (
		SELECT t.typbasetype, t.typdefault FROM pg_catalog.pg_type t
		WHERE t.oid = pg_catalog.to_regtype($1) AND t.typtype = 'd'
		UNION ALL
		SELECT t.typbasetype, t.typdefault FROM d JOIN pg_catalog.pg_type t ON t.oid = d.base
		WHERE d.def IS NULL AND t.typtype = 'd')
	SELECT def FROM d WHERE def IS NOT NULL LIMIT 1`

// hasRows reports whether table (a quoted name) holds a row.
func hasRows(ctx context.Context, conn *pgconn.PgConn, table string) (bool, error) {
	r := conn.ExecParams(ctx, "SELECT pg_catalog.format('SELECT EXISTS (SELECT 1 FROM %s)', $1::pg_catalog.regclass)",
		[][]byte{[]byte(table)}, nil, nil, nil).Read()
	if r.Err != nil {
		return false, r.Err
	}
	r = conn.ExecParams(ctx, string(r.Rows[0][0]), nil, nil, nil, nil).Read()
	if r.Err != nil {
		return false, r.Err
	}
	return string(r.Rows[0][0]) == "t", nil
}
