package sqlite

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"zombiezen.com/go/sqlite"

	"certa/pgparse"
	"certa/pgtext"
	"certa/sqlerr"
)

// The functions catalog queries call (pgparse.CatalogFunctions), and the
// printer's own: certa_out prints arrays and reg* values as PostgreSQL
// does, certa_array_in reads an array's text form, certa_*_in read reg*
// names. A failure is kept on the connection (funcErr), as pg_cast's is.

type catalogFunc func(args []sqlite.Value) (sqlite.Value, error)

func (db *catalogDB) registerFunctions() error {
	text := func(s string) sqlite.Value { return sqlite.TextValue(s) }
	null := sqlite.Value{}
	yes := func([]sqlite.Value) (sqlite.Value, error) { return sqlite.IntegerValue(1), nil }
	no := func([]sqlite.Value) (sqlite.Value, error) { return sqlite.IntegerValue(0), nil }
	none := func([]sqlite.Value) (sqlite.Value, error) { return null, nil }
	arg := func(a []sqlite.Value, i int) sqlite.Value {
		if i < len(a) {
			return a[i]
		}
		return null
	}
	fns := map[string]catalogFunc{
		"certa_out":      func(a []sqlite.Value) (sqlite.Value, error) { return db.out(arg(a, 0), arg(a, 1).Text()) },
		"certa_array_in": func(a []sqlite.Value) (sqlite.Value, error) { return arrayIn(arg(a, 0)) },
		"certa_regclass_in": func(a []sqlite.Value) (sqlite.Value, error) {
			if oid, ok := db.regclass(arg(a, 0).Text()); ok {
				return sqlite.IntegerValue(oid), nil
			}
			return null, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", arg(a, 0).Text())
		},
		"certa_regtype_in": func(a []sqlite.Value) (sqlite.Value, error) {
			if t, ok := pgparse.LookupType(arg(a, 0).Text()); ok {
				return sqlite.IntegerValue(int64(t.OID)), nil
			}
			return null, sqlerr.New(sqlerr.UndefinedObject, "type %q does not exist", arg(a, 0).Text())
		},
		"certa_regnamespace_in": func(a []sqlite.Value) (sqlite.Value, error) {
			if oid, ok := map[string]int64{"public": oidPublic, "pg_catalog": oidPgCatalog, "information_schema": oidInfoSchema}[arg(a, 0).Text()]; ok {
				return sqlite.IntegerValue(oid), nil
			}
			return null, sqlerr.New(sqlerr.InvalidSchemaName, "schema %q does not exist", arg(a, 0).Text())
		},
		"certa_regrole_in": func(a []sqlite.Value) (sqlite.Value, error) {
			if arg(a, 0).Text() == "certa" {
				return sqlite.IntegerValue(oidUser), nil
			}
			return null, sqlerr.New(sqlerr.UndefinedObject, "role %q does not exist", arg(a, 0).Text())
		},
		"certa_regproc_in": func(a []sqlite.Value) (sqlite.Value, error) {
			return null, sqlerr.New(sqlerr.UndefinedFunction, "function %q does not exist", arg(a, 0).Text())
		},
		"pg_get_expr": func(a []sqlite.Value) (sqlite.Value, error) { return arg(a, 0), nil },
		"pg_get_indexdef": func(a []sqlite.Value) (sqlite.Value, error) {
			oid := arg(a, 0).Int64()
			if col := arg(a, 1).Int64(); col > 0 {
				if cols := db.indexCols[oid]; int(col) <= len(cols) {
					return text(pgQuoteIdent(cols[col-1])), nil
				}
				return text(""), nil
			}
			if def, ok := db.indexDefs[oid]; ok {
				return text(def), nil
			}
			return null, nil
		},
		"pg_get_constraintdef": func(a []sqlite.Value) (sqlite.Value, error) {
			if def, ok := db.constraintDefs[arg(a, 0).Int64()]; ok {
				return text(def), nil
			}
			return null, nil
		},
		"pg_get_triggerdef": none, "pg_get_viewdef": none, "pg_get_partkeydef": none,
		"pg_get_statisticsobjdef_columns": none, "pg_get_function_result": none,
		"pg_get_function_arguments": none, "pg_get_function_identity_arguments": none, "pg_get_keywords": none,
		"pg_get_userbyid": func([]sqlite.Value) (sqlite.Value, error) { return text("certa"), nil },
		"pg_get_serial_sequence": func(a []sqlite.Value) (sqlite.Value, error) {
			if seq, ok := db.serialSeqs[strings.ToLower(strings.TrimPrefix(arg(a, 0).Text(), "public."))+"."+arg(a, 1).Text()]; ok {
				return text("public." + pgQuoteIdent(seq)), nil
			}
			return null, nil
		},
		"format_type": func(a []sqlite.Value) (sqlite.Value, error) {
			if arg(a, 0).Type() == sqlite.TypeNull {
				return null, nil
			}
			mod := int64(-1)
			if m := arg(a, 1); m.Type() != sqlite.TypeNull {
				mod = m.Int64()
			}
			return text(formatType(arg(a, 0).Int64(), mod)), nil
		},
		"pg_table_is_visible": yes, "pg_type_is_visible": yes, "pg_function_is_visible": yes,
		"has_table_privilege": yes, "has_schema_privilege": yes, "has_database_privilege": yes,
		"has_column_privilege": yes, "has_sequence_privilege": yes, "pg_has_role": yes,
		"pg_relation_is_publishable": no, "pg_is_in_recovery": no,
		"pg_encoding_to_char": func([]sqlite.Value) (sqlite.Value, error) { return text("UTF8"), nil },
		"pg_char_to_encoding": func([]sqlite.Value) (sqlite.Value, error) { return sqlite.IntegerValue(6), nil },
		"obj_description":     none, "col_description": none, "shobj_description": none,
		"pg_relation_size": no, "pg_table_size": no, "pg_total_relation_size": no, "pg_indexes_size": no, "pg_database_size": no,
		"pg_size_pretty": func(a []sqlite.Value) (sqlite.Value, error) { return text(arg(a, 0).Text() + " bytes"), nil },
		"current_schemas": func(a []sqlite.Value) (sqlite.Value, error) {
			if arg(a, 0).Int64() != 0 {
				return text(`["pg_catalog","public"]`), nil
			}
			return text(`["public"]`), nil
		},
		"quote_ident": func(a []sqlite.Value) (sqlite.Value, error) { return text(pgQuoteIdent(arg(a, 0).Text())), nil },
		"to_regtype": func(a []sqlite.Value) (sqlite.Value, error) {
			if t, ok := pgparse.LookupType(arg(a, 0).Text()); ok {
				return sqlite.IntegerValue(int64(t.OID)), nil
			}
			return null, nil
		},
		"to_regclass": func(a []sqlite.Value) (sqlite.Value, error) {
			if oid, ok := db.regclass(arg(a, 0).Text()); ok {
				return sqlite.IntegerValue(oid), nil
			}
			return null, nil
		},
		"pg_backend_pid":    func([]sqlite.Value) (sqlite.Value, error) { return sqlite.IntegerValue(1), nil },
		"pg_partition_root": func(a []sqlite.Value) (sqlite.Value, error) { return arg(a, 0), nil },
		// No partitions: a table is its own only ancestor.
		"pg_partition_ancestors": func(a []sqlite.Value) (sqlite.Value, error) { return db.regclassArg(arg(a, 0)) },
	}
	for name := range pgparse.CatalogFunctions {
		if fns[name] == nil {
			return fmt.Errorf("catalog function %s is not registered", name)
		}
	}
	for name, fn := range fns {
		err := db.c.c.CreateFunction(name, &sqlite.FunctionImpl{
			NArgs: -1,
			Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
				v, err := fn(args)
				if err != nil {
					if se, ok := err.(*sqlerr.Error); ok && db.c.funcErr == nil {
						db.c.funcErr = se
					}
					return sqlite.Value{}, nil
				}
				return v, nil
			},
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// regclassArg is a regclass argument given as an oid or a name.
func (db *catalogDB) regclassArg(v sqlite.Value) (sqlite.Value, error) {
	if v.Type() == sqlite.TypeInteger || v.Type() == sqlite.TypeNull {
		return v, nil
	}
	if oid, ok := db.regclass(v.Text()); ok {
		return sqlite.IntegerValue(oid), nil
	}
	return sqlite.Value{}, sqlerr.New(sqlerr.UndefinedTable, "relation %q does not exist", v.Text())
}

// regclass is the oid of the relation a regclass name names: quoted or
// not, qualified by public or not.
func (db *catalogDB) regclass(name string) (int64, bool) {
	name = strings.TrimSpace(name)
	if n, err := strconv.ParseInt(name, 10, 64); err == nil {
		return n, true
	}
	name = strings.TrimPrefix(name, "public.")
	if strings.HasPrefix(name, `"`) && strings.HasSuffix(name, `"`) && len(name) > 1 {
		name = strings.ReplaceAll(name[1:len(name)-1], `""`, `"`)
	} else {
		name = strings.ToLower(name)
	}
	for oid, n := range db.relNames {
		if n == pgQuoteIdent(name) {
			return oid, true
		}
	}
	return 0, false
}

// out prints v, of type typ, as PostgreSQL prints that type.
func (db *catalogDB) out(v sqlite.Value, typ string) (sqlite.Value, error) {
	if v.Type() == sqlite.TypeNull {
		return v, nil
	}
	switch typ {
	case "regclass":
		if name, ok := db.relNames[v.Int64()]; ok {
			return sqlite.TextValue(name), nil
		}
		return sqlite.TextValue(v.Text()), nil
	case "regtype":
		if name, ok := db.typeNames[v.Int64()]; ok {
			return sqlite.TextValue(name), nil
		}
		return sqlite.TextValue(v.Text()), nil
	case "regproc":
		if v.Int64() == 0 {
			return sqlite.TextValue("-"), nil
		}
		return sqlite.TextValue(v.Text()), nil
	case "regnamespace":
		names := map[int64]string{oidPublic: "public", oidPgCatalog: "pg_catalog", oidInfoSchema: "information_schema"}
		if name, ok := names[v.Int64()]; ok {
			return sqlite.TextValue(name), nil
		}
		return sqlite.TextValue(v.Text()), nil
	case "regrole":
		if v.Int64() == oidUser {
			return sqlite.TextValue("certa"), nil
		}
		return sqlite.TextValue(v.Text()), nil
	}
	var elems []any
	if err := json.Unmarshal([]byte(v.Text()), &elems); err != nil {
		return v, nil // not an array: as it is
	}
	strs := make([]*string, len(elems))
	for i, e := range elems {
		var s string
		switch e := e.(type) {
		case nil:
			continue
		case string:
			s = e
		case float64:
			s = strconv.FormatFloat(e, 'f', -1, 64)
		case bool:
			s = map[bool]string{true: "t", false: "f"}[e]
		default:
			b, _ := json.Marshal(e)
			s = string(b)
		}
		strs[i] = &s
	}
	if typ == "int2vector" || typ == "oidvector" {
		parts := make([]string, len(strs))
		for i, s := range strs {
			if s != nil {
				parts[i] = *s
			}
		}
		return sqlite.TextValue(strings.Join(parts, " ")), nil
	}
	return sqlite.TextValue(pgtext.FormatArray(strs)), nil
}

// arrayIn reads an array's text form ('{a,b}', or an int2vector's "1 2")
// as a JSON array; elements that are integers become numbers.
func arrayIn(v sqlite.Value) (sqlite.Value, error) {
	if v.Type() == sqlite.TypeNull {
		return v, nil
	}
	s := strings.TrimSpace(v.Text())
	var elems []*string
	if strings.HasPrefix(s, "[") {
		return v, nil // already JSON
	}
	if strings.HasPrefix(s, "{") {
		var err error
		if elems, err = pgtext.ParseArray(s); err != nil {
			return sqlite.Value{}, err
		}
	} else {
		for _, f := range strings.Fields(s) {
			elems = append(elems, &f)
		}
	}
	out := make([]any, len(elems))
	for i, e := range elems {
		if e == nil {
			continue
		}
		if n, err := strconv.ParseInt(*e, 10, 64); err == nil {
			out[i] = n
		} else {
			out[i] = *e
		}
	}
	b, _ := json.Marshal(out)
	return sqlite.TextValue(string(b)), nil
}

// formatType is format_type(oid, typmod): the type's name with its
// modifiers.
func formatType(oid, mod int64) string {
	t, ok := pgparse.TypeByOID(uint32(oid))
	if !ok {
		return "???"
	}
	name := t.Name
	if mod < 0 {
		return name
	}
	switch t.Typname {
	case "varchar", "bpchar":
		return fmt.Sprintf("%s(%d)", name, mod-4)
	case "numeric":
		if mod >= 4 {
			return fmt.Sprintf("numeric(%d,%d)", (mod-4)>>16, (mod-4)&0xffff)
		}
	case "timestamp", "timestamptz", "time":
		base, rest, _ := strings.Cut(name, " ")
		return fmt.Sprintf("%s(%d) %s", base, mod, rest)
	}
	return name
}
