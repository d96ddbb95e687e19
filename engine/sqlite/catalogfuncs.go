package sqlite

import (
	"encoding/json"
	"fmt"
	"math"
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
			if t, ok := lookupTypeName(arg(a, 0).Text()); ok {
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
			if name := strings.TrimPrefix(arg(a, 0).Text(), "pg_catalog."); name == "array_in" {
				return sqlite.IntegerValue(oidArrayIn), nil
			}
			return null, sqlerr.New(sqlerr.UndefinedFunction, "function %q does not exist", arg(a, 0).Text())
		},
		"pg_get_expr": func(a []sqlite.Value) (sqlite.Value, error) { return arg(a, 0), nil },
		"pg_get_indexdef": func(a []sqlite.Value) (sqlite.Value, error) {
			oid := arg(a, 0).Int64()
			if col := arg(a, 1).Int64(); col > 0 {
				if exprs := db.indexExprs[oid]; int(col) <= len(exprs) && exprs[col-1] != "" {
					return text(exprs[col-1]), nil
				}
				if cols := db.indexCols[oid]; int(col) <= len(cols) {
					return text(pgparse.QuoteIdent(cols[col-1])), nil
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
		"pg_get_viewdef": func(a []sqlite.Value) (sqlite.Value, error) {
			oid, _ := db.regclass(arg(a, 0).Text()) // an oid, or pg_get_viewdef('name')
			if def, ok := db.viewDefs[oid]; ok {
				return text(def), nil
			}
			return null, nil
		},
		"pg_get_triggerdef": none, "pg_get_partkeydef": none, "pg_get_ruledef": none,
		"pg_get_statisticsobjdef_columns": none, "pg_get_function_result": none,
		"pg_get_function_arguments": none, "pg_get_function_identity_arguments": none, "pg_get_keywords": none,
		"pg_get_userbyid": func([]sqlite.Value) (sqlite.Value, error) { return text("certa"), nil },
		"pg_get_serial_sequence": func(a []sqlite.Value) (sqlite.Value, error) {
			if seq, ok := db.serialSeqs[strings.ToLower(strings.TrimPrefix(arg(a, 0).Text(), "public."))+"."+arg(a, 1).Text()]; ok {
				return text("public." + pgparse.QuoteIdent(seq)), nil
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
				if t, ok := pgparse.TypeByOID(uint32(arg(a, 0).Int64())); ok && t.Typname == "bpchar" && mod < 0 {
					// character without a length: PostgreSQL's name
					// then, as "character" would be character(1).
					return text("bpchar"), nil
				}
			}
			return text(formatType(arg(a, 0).Int64(), mod)), nil
		},
		"pg_table_is_visible": func(a []sqlite.Value) (sqlite.Value, error) {
			if db.hidden[arg(a, 0).Int64()] {
				return no(a)
			}
			return yes(a)
		},
		"pg_type_is_visible": yes, "pg_function_is_visible": yes,
		"has_table_privilege": yes, "has_schema_privilege": yes, "has_database_privilege": yes,
		"has_column_privilege": yes, "has_sequence_privilege": yes, "pg_has_role": yes,
		"pg_relation_is_publishable": no, "pg_is_in_recovery": no,
		"pg_encoding_to_char": func([]sqlite.Value) (sqlite.Value, error) { return text("UTF8"), nil },
		"pg_char_to_encoding": func([]sqlite.Value) (sqlite.Value, error) { return sqlite.IntegerValue(6), nil },
		"obj_description": func(a []sqlite.Value) (sqlite.Value, error) {
			if d, ok := db.descriptions[[2]int64{arg(a, 0).Int64(), 0}]; ok {
				return text(d), nil
			}
			return null, nil
		},
		"col_description": func(a []sqlite.Value) (sqlite.Value, error) {
			if d, ok := db.descriptions[[2]int64{arg(a, 0).Int64(), arg(a, 1).Int64()}]; ok {
				return text(d), nil
			}
			return null, nil
		},
		"shobj_description": none,
		"pg_relation_size":  no, "pg_table_size": no, "pg_total_relation_size": no, "pg_indexes_size": no, "pg_database_size": no,
		"pg_size_pretty": func(a []sqlite.Value) (sqlite.Value, error) {
			if v := arg(a, 0); v.Type() == sqlite.TypeInteger || v.Type() == sqlite.TypeFloat {
				return text(sizePretty(v)), nil
			}
			return null, nil
		},
		"current_schemas": func(a []sqlite.Value) (sqlite.Value, error) {
			if arg(a, 0).Int64() != 0 {
				return text(`["pg_catalog","public"]`), nil
			}
			return text(`["public"]`), nil
		},
		"quote_ident": func(a []sqlite.Value) (sqlite.Value, error) { return text(pgparse.QuoteIdent(arg(a, 0).Text())), nil },
		"quote_literal": func(a []sqlite.Value) (sqlite.Value, error) {
			if arg(a, 0).Type() == sqlite.TypeNull {
				return null, nil
			}
			return text(pgQuoteLiteral(arg(a, 0).Text())), nil
		},
		"acldefault": func(a []sqlite.Value) (sqlite.Value, error) {
			if arg(a, 0).Type() == sqlite.TypeNull || arg(a, 1).Type() == sqlite.TypeNull {
				return null, nil
			}
			acl, err := aclDefault(arg(a, 0).Text(), arg(a, 1).Int64())
			return text(acl), err
		},
		"to_regtype": func(a []sqlite.Value) (sqlite.Value, error) {
			if t, ok := lookupTypeName(arg(a, 0).Text()); ok {
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
		// A catalog query has no session to set a parameter of (pg_dump
		// asks for one this version does not have: no row, no call).
		"set_config": func(a []sqlite.Value) (sqlite.Value, error) {
			return null, sqlerr.New(sqlerr.FeatureNotSupported, "set_config in a query over the system catalogs is not supported: use SET")
		},
		// No partitions: a table is its own only ancestor.
		"pg_partition_ancestors": func(a []sqlite.Value) (sqlite.Value, error) { return db.regclassArg(arg(a, 0)) },
	}
	for name := range pgparse.CatalogFunctions {
		if fns[name] == nil {
			return fmt.Errorf("catalog function %s is not registered", name)
		}
	}
	for name, fn := range fns {
		strict := strings.HasPrefix(name, "certa_") && strings.HasSuffix(name, "_in") // NULL::regclass is NULL
		err := db.c.c.CreateFunction(name, &sqlite.FunctionImpl{
			NArgs: -1,
			Scalar: func(_ sqlite.Context, args []sqlite.Value) (sqlite.Value, error) {
				if strict && (len(args) == 0 || args[0].Type() == sqlite.TypeNull) {
					return sqlite.Value{}, nil
				}
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
	parts := splitQualified(name)
	if len(parts) == 3 && parts[0] == "certa" { // the database's name
		parts = parts[1:]
	}
	schema := ""
	if len(parts) == 2 {
		schema, parts = parts[0], parts[1:]
	}
	if len(parts) != 1 {
		return 0, false
	}
	if schema == "" || schema == "public" || schema == tempSchema || schema == "pg_temp" {
		// A session's temporary relation hides the table of its name.
		found := int64(0)
		for oid, n := range db.relNames {
			temp := oid >= firstTempOID
			if n != pgparse.QuoteIdent(parts[0]) || schema == "public" && temp || schema != "" && schema != "public" && !temp {
				continue
			}
			if temp || found == 0 {
				found = oid
			}
		}
		if found != 0 {
			return found, true
		}
	}
	if schema == "" || schema == "pg_catalog" {
		oid, ok := catalogRelationOIDs[parts[0]]
		return oid, ok
	}
	return 0, false
}

// catalogRelationOIDs are PostgreSQL's oids of its catalogs that catalog
// queries name as regclass constants ('pg_class'::regclass).
var catalogRelationOIDs = map[string]int64{
	"pg_class": oidPgClass, "pg_attribute": 1249, "pg_type": 1247, "pg_proc": 1255, "pg_namespace": 2615,
	"pg_constraint": 2606, "pg_index": 2610, "pg_attrdef": 2604, "pg_depend": 2608, "pg_description": 2609,
	"pg_database": 1262, "pg_am": 2601, "pg_trigger": 2620, "pg_sequence": 2224, "pg_rewrite": 2618,
	"pg_extension": 3079, "pg_collation": 3456, "pg_enum": 3501, "pg_event_trigger": 3466, "pg_foreign_table": 3118,
	"pg_operator": 2617, "pg_opclass": 2616, "pg_cast": 2605, "pg_language": 2612, "pg_policy": 3256,
	"pg_publication": 6104, "pg_statistic_ext": 3381, "pg_transform": 3576, "pg_ts_config": 3602,
	"pg_conversion": 2607, "pg_authid": 1260, "pg_tablespace": 1213, "pg_foreign_server": 1417,
	"pg_foreign_data_wrapper": 2328, "pg_subscription": 6100, "pg_largeobject": 2613, "pg_init_privs": 3394,
	"pg_seclabel": 3596, "pg_default_acl": 826, "pg_inherits": 2611, "pg_range": 3541,
	"pg_partitioned_table": 3350, "pg_aggregate": 2600, "pg_amop": 2602, "pg_amproc": 2603, "pg_opfamily": 2753,
	"pg_publication_rel": 6106, "pg_publication_namespace": 6237, "pg_auth_members": 1261, "pg_shdescription": 2396,
	"pg_largeobject_metadata": 2995, "pg_shseclabel": 3592, "pg_db_role_setting": 2964, "pg_ts_dict": 3600, "pg_ts_parser": 3601, "pg_ts_template": 3764,
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
		switch v.Int64() {
		case 0:
			return sqlite.TextValue("-"), nil
		case oidArrayIn:
			return sqlite.TextValue("array_in"), nil
		}
		return sqlite.TextValue(v.Text()), nil
	case "regnamespace":
		names := map[int64]string{oidPublic: "public", oidPgCatalog: "pg_catalog", oidInfoSchema: "information_schema", oidTempNamespace: tempSchema}
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

// pgQuoteLiteral is quote_literal: s in single quotes, quotes doubled,
// and, if s has a backslash, backslashes doubled in an E” string.
func pgQuoteLiteral(s string) string {
	q := "'" + strings.ReplaceAll(s, "'", "''") + "'"
	if strings.Contains(s, `\`) {
		q = "E" + strings.ReplaceAll(q, `\`, `\\`)
	}
	return q
}

// splitQualified splits a qualified name (a."B".c) into its parts, as
// PostgreSQL reads them: quoted parts as written, others in lower case.
func splitQualified(name string) []string {
	var parts []string
	var b strings.Builder
	quoted := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '"' && quoted && i+1 < len(name) && name[i+1] == '"':
			b.WriteByte('"')
			i++
		case c == '"':
			quoted = !quoted
		case c == '.' && !quoted:
			parts = append(parts, b.String())
			b.Reset()
		case quoted:
			b.WriteByte(c)
		default:
			b.WriteString(strings.ToLower(string(c)))
		}
	}
	return append(parts, b.String())
}

// lookupTypeName is the built-in type a regtype name names: as format_type
// prints it ("character varying"), or qualified and quoted
// ("pg_catalog"."int8").
func lookupTypeName(name string) (pgparse.TypeInfo, bool) {
	if t, ok := pgparse.LookupType(name); ok {
		return t, true
	}
	parts := splitQualified(strings.TrimSpace(name))
	if len(parts) == 2 && parts[0] == "pg_catalog" {
		return pgparse.LookupType(parts[1])
	}
	return pgparse.TypeInfo{}, false
}

// sizeUnits are pg_size_pretty's units: a size is shown in the first
// whose limit it is under (after the division to it), with half
// rounding from kB on; a unit is 2^bits bytes.
var sizeUnits = []struct {
	name  string
	limit int64
	round bool
	bits  uint
}{{"bytes", 10 * 1024, false, 0}, {"kB", 20*1024 - 1, true, 10}, {"MB", 20*1024 - 1, true, 20},
	{"GB", 20*1024 - 1, true, 30}, {"TB", 20*1024 - 1, true, 40}, {"PB", 20*1024 - 1, true, 50}}

// sizePretty is PostgreSQL's pg_size_pretty of v, an integer (bigint) or
// a double (numeric: a fraction shows in bytes, and is cut off before
// division to a larger unit).
func sizePretty(v sqlite.Value) string {
	size := v.Int64()
	if v.Type() == sqlite.TypeFloat {
		f := v.Float()
		if math.Abs(f) < float64(sizeUnits[0].limit) {
			return strconv.FormatFloat(f, 'f', -1, 64) + " bytes"
		}
		size = int64(math.Trunc(f))
	}
	for i, u := range sizeUnits {
		if i == len(sizeUnits)-1 || -u.limit < size && size < u.limit {
			if u.round {
				if size < 0 {
					size = (size - 1) / 2
				} else {
					size = (size + 1) / 2
				}
			}
			return strconv.FormatInt(size, 10) + " " + u.name
		}
		next := sizeUnits[i+1]
		bits := next.bits - u.bits
		if next.round {
			bits--
		}
		if u.round {
			bits++
		}
		size /= int64(1) << bits
	}
	return ""
}
