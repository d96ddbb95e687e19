package postgres

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"certa/writeset"
)

// A write set carries, besides its rows' keys, the key of each parent row
// a child row it inserts or re-points references (the parent's row key,
// or the unique-value key of the unique constraint the foreign key
// references), and the unique-value keys of the values of unique indexes
// its rows take or free; NULLs take none (but NULLS NOT DISTINCT). Keys
// follow schema changes.
func TestRefKeys(t *testing.T) {
	e := openEngine(t)
	f := &tempFixture{t: t, e: e}
	ddl := func(stmts ...string) {
		t.Helper()
		for _, s := range stmts {
			if err := f.apply(&writeset.WriteSet{DDL: ddlText(s)}); err != nil {
				t.Fatalf("%s: %v", s, err)
			}
		}
	}
	ddl(`CREATE TABLE parent (id int PRIMARY KEY, code text UNIQUE, name text)`,
		`CREATE TABLE child (id int PRIMARY KEY, pid int REFERENCES parent ON DELETE CASCADE,
			pcode text REFERENCES parent (code) ON UPDATE CASCADE, email text, nick text,
			CONSTRAINT child_email UNIQUE (email) DEFERRABLE INITIALLY DEFERRED,
			CONSTRAINT child_nick UNIQUE NULLS NOT DISTINCT (nick))`,
		`CREATE TABLE pair (x int, y text, PRIMARY KEY (x, y))`,
		`CREATE TABLE pairref (id int PRIMARY KEY, b text, a bigint, FOREIGN KEY (b, a) REFERENCES pair (y, x))`,
		`CREATE TABLE real8 (v float8 PRIMARY KEY)`,
		`CREATE TABLE real4ref (id int PRIMARY KEY, v real REFERENCES real8)`,
		`CREATE TABLE part (id int PRIMARY KEY, v text) PARTITION BY RANGE (id)`,
		`CREATE TABLE part1 PARTITION OF part FOR VALUES FROM (0) TO (100)`,
		`CREATE TABLE part2 PARTITION OF part FOR VALUES FROM (100) TO (200)`,
		`CREATE TABLE partref (id int PRIMARY KEY, pid int REFERENCES part)`,
		`CREATE TABLE holes (id int PRIMARY KEY, span interval UNIQUE, email text, active bool)`,
		`CREATE UNIQUE INDEX holes_lower ON holes (lower(email))`,
		`CREATE UNIQUE INDEX holes_active ON holes (email) WHERE active`,
		`CREATE TABLE tree (id int PRIMARY KEY, up int REFERENCES tree)`,
		`CREATE TABLE nopk (a int, b text UNIQUE, c int REFERENCES parent)`,
		`CREATE COLLATION nocase (provider = icu, locale = 'und-u-ks-level2', deterministic = false)`,
		`CREATE COLLATION cs (provider = icu, locale = 'und')`,
		`CREATE TABLE cspk (x text COLLATE cs PRIMARY KEY)`,
		`CREATE TABLE cifk (x text COLLATE nocase REFERENCES cspk)`,
	)
	s := e.NewSession()
	defer s.Close()
	for _, c := range []struct {
		stmts []string
		keys  []writeset.Key
	}{
		{[]string{`INSERT INTO parent VALUES (1, 'a', 'p1'), (2, 'b', 'p2'), (3, NULL, 'p3')`}, []writeset.Key{
			key("parent", 1), key("parent", 2), key("parent", 3), uk("parent", "parent_code_key", "a"), uk("parent", "parent_code_key", "b")}},
		{[]string{`INSERT INTO child VALUES (10, 1, 'a', 'x@e', 'n1')`}, []writeset.Key{
			key("child", 10), key("parent", 1), uk("parent", "parent_code_key", "a"), uk("child", "child_email", "x@e"), uk("child", "child_nick", "n1")}},
		{[]string{`INSERT INTO child VALUES (11, NULL, NULL, NULL, NULL)`}, []writeset.Key{key("child", 11), uk("child", "child_nick", nil)}},
		{[]string{`UPDATE child SET nick = 'n11' WHERE id = 11`}, []writeset.Key{key("child", 11), uk("child", "child_nick", nil), uk("child", "child_nick", "n11")}},
		{[]string{`UPDATE child SET email = 'y@e' WHERE id = 10`}, []writeset.Key{key("child", 10), uk("child", "child_email", "x@e"), uk("child", "child_email", "y@e")}},
		{[]string{`UPDATE child SET pid = 2 WHERE id = 10`}, []writeset.Key{key("child", 10), key("parent", 2)}},
		{[]string{`UPDATE child SET pid = pid, email = email WHERE id = 10`}, []writeset.Key{key("child", 10)}},
		{[]string{`UPDATE parent SET name = 'x' WHERE id = 1`}, []writeset.Key{key("parent", 1)}},
		// The cascade re-points the child to the new value.
		{[]string{`UPDATE parent SET code = 'a2' WHERE id = 1`}, []writeset.Key{
			key("parent", 1), uk("parent", "parent_code_key", "a"), uk("parent", "parent_code_key", "a2"), key("child", 10)}},
		{[]string{`DELETE FROM child WHERE id = 10`}, []writeset.Key{key("child", 10), uk("child", "child_email", "y@e"), uk("child", "child_nick", "n1")}},
		{[]string{`UPDATE parent SET code = 'c' WHERE id = 3`}, []writeset.Key{key("parent", 3), uk("parent", "parent_code_key", "c")}},
		{[]string{`INSERT INTO child VALUES (12, 2, NULL, NULL, 'n12')`}, []writeset.Key{key("child", 12), key("parent", 2), uk("child", "child_nick", "n12")}},
		{[]string{`DELETE FROM parent WHERE id = 2`}, []writeset.Key{
			key("parent", 2), uk("parent", "parent_code_key", "b"), key("child", 12), uk("child", "child_nick", "n12")}},
		// A composite key referenced in another order, of another integer type.
		{[]string{`INSERT INTO pair VALUES (1, 'p')`, `INSERT INTO pairref VALUES (1, 'p', 1)`}, []writeset.Key{
			key("pair", 1, "p"), key("pairref", 1)}},
		{[]string{`INSERT INTO pairref VALUES (2, 'p', 1)`}, []writeset.Key{key("pairref", 2), key("pair", 1, "p")}},
		// Forms that differ (float4 to float8), a partitioned parent (its
		// rows are keyed by partition): the parent is looked up and its row
		// key carried.
		{[]string{`INSERT INTO real8 VALUES (0.5), (0.1)`}, []writeset.Key{key("real8", 0.5), key("real8", 0.1)}},
		{[]string{`INSERT INTO real4ref VALUES (1, 0.5), (2, NULL)`}, []writeset.Key{key("real4ref", 1), key("real4ref", 2), key("real8", 0.5)}},
		{[]string{`INSERT INTO part VALUES (5, 'a'), (150, 'b')`}, []writeset.Key{key("part1", 5), key("part2", 150)}},
		{[]string{`INSERT INTO partref VALUES (1, 150)`}, []writeset.Key{key("partref", 1), key("part2", 150)}},
		// No exact key for an interval nor an expression: one key for
		// the whole index (coarse); a partial index is keyed whatever its
		// predicate.
		{[]string{`INSERT INTO holes VALUES (1, '1 day', 'A@x', true), (2, '2 days', 'b@x', false)`}, []writeset.Key{
			key("holes", 1), key("holes", 2), uk("holes", "holes_active", "A@x"), uk("holes", "holes_active", "b@x"),
			uniqueKeyOf("holes", uniquePrefix("holes_lower"), nil), uniqueKeyOf("holes", uniquePrefix("holes_span_key"), nil)}},
		{[]string{`INSERT INTO tree VALUES (1, NULL), (2, 1)`}, []writeset.Key{key("tree", 1), key("tree", 2)}},
		{[]string{`UPDATE tree SET up = 2 WHERE id = 1`}, []writeset.Key{key("tree", 1), key("tree", 2)}},
		// A table without a primary key.
		{[]string{`INSERT INTO nopk VALUES (1, 'u', 3)`}, []writeset.Key{
			wholeRowKey("nopk", `{"a": 1, "b": "u", "c": 3}`), uk("nopk", "nopk_b_key", "u"), key("parent", 3)}},
		// A child column of another collation (nondeterministic: no exact
		// key) finds its parent in the parent's collation, as PostgreSQL's
		// check does.
		{[]string{`INSERT INTO cspk VALUES ('abc')`}, []writeset.Key{key("cspk", "abc")}},
		{[]string{`INSERT INTO cifk VALUES ('abc')`}, []writeset.Key{wholeRowKey("cifk", `{"x": "abc"}`), key("cspk", "abc")}},
	} {
		ws := f.exec(s, c.stmts...)
		if ws == nil {
			t.Fatalf("%q: no write set", c.stmts)
		}
		want := writeset.WriteSet{Keys: c.keys}
		want.Normalize()
		all := writeset.WriteSet{Keys: append(slices.Clone(ws.Keys), ws.SharedKeys...)} // parents' keys are shared
		all.Normalize()
		if !slices.Equal(all.Keys, want.Keys) {
			t.Errorf("%q: keys\n%s\nwant\n%s", c.stmts, fmtKeys(all.Keys), fmtKeys(want.Keys))
		}
		for _, k := range all.Keys {
			if !slices.Contains(ws.Tables, k.Table()) {
				t.Errorf("%q: tables %q without %q", c.stmts, ws.Tables, k.Table())
			}
		}
	}

	// Schema changes: a new unique column is keyed, a dropped foreign
	// key no longer is.
	ddl(`ALTER TABLE child ADD COLUMN tag text UNIQUE`, `ALTER TABLE child DROP CONSTRAINT child_pid_fkey`)
	ws := f.exec(s, `INSERT INTO child VALUES (13, 1, NULL, NULL, 'n13', 't')`)
	want := writeset.WriteSet{Keys: []writeset.Key{key("child", 13), uk("child", "child_nick", "n13"), uk("child", "child_tag_key", "t")}}
	want.Normalize()
	if !slices.Equal(ws.Keys, want.Keys) {
		t.Errorf("after the schema changes: keys\n%s\nwant\n%s", fmtKeys(ws.Keys), fmtKeys(want.Keys))
	}
}

// uk is uniqueKey with ints as int64.
func uk(table, index string, vals ...any) writeset.Key {
	for i, v := range vals {
		if n, ok := v.(int); ok {
			vals[i] = int64(n)
		}
	}
	return uniqueKey(table, index, vals)
}

// wholeRowKey is the key of a row of a table without a primary key.
func wholeRowKey(table, row string) writeset.Key {
	_, k, _ := keyOf(&tableMeta{name: table, schema: "public"}, []byte(row))
	return k
}

func fmtKeys(keys []writeset.Key) string {
	var b strings.Builder
	for _, k := range keys {
		b.WriteString("  " + strings.ReplaceAll(string(k), "\x00", "|") + "\n")
	}
	return b.String()
}

// parseObject splits a JSON object as encoding/json does, and refuses
// what is not one.
func FuzzParseObject(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"a": 1}`, `{"a": 1, "b": "x", "c": null, "d": true, "e": -1.5e-3}`,
		`{"k\"ey": "v\\\"al", "x\u00e9": "\u00e9", "n": [1, "]", {"a": "}"}], "o": {"p": [[]], "q": "{"}}`,
		`{"a": 1,}`, `{"a" 1}`, `{"a": }`, `{"a": "x}`, `{"a": [1, 2}`, `{"a": 1} x`, `[1]`, `"s"`, ``, `{`,
		`{"a":1,"a":2}`, "{\"t\":\t\"\\t\"\n}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cols, err := parseObject(b, nil)
		var want map[string]json.RawMessage
		wantErr := json.Unmarshal(b, &want)
		if wantErr != nil || want == nil || !utf8.Valid(b) {
			// jsonb never writes what encoding/json refuses, nor text
			// that is not UTF-8; parseObject may accept some of it (it
			// does not check literals).
			return
		}
		if err != nil {
			t.Fatalf("%q: %v, encoding/json reads %v", b, err, want)
		}
		got := map[string]string{}
		for _, c := range cols {
			got[string(c.name)] = string(c.raw)
		}
		if len(got) != len(cols) {
			return // a name twice, which jsonb never writes
		}
		if len(got) != len(want) {
			t.Fatalf("%q: %q, want %q", b, got, want)
		}
		for k, v := range want {
			if g, ok := cols.get(k); !ok || string(g) != string(v) {
				t.Fatalf("%q: %s is %q, want %q", b, k, g, v)
			}
		}
	})
}

// keyValue reads a string without escapes as it is, and one with them
// as encoding/json does.
func TestKeyValueStrings(t *testing.T) {
	for raw, want := range map[string]any{`"abc"`: "abc", `""`: "", `"a\"b"`: `a"b`, `"\u00e9\n"`: "é\n", `"é"`: "é"} {
		if got, err := keyValue(json.RawMessage(raw)); err != nil || got != want {
			t.Errorf("keyValue(%s) = %q, %v; want %q", raw, got, err, want)
		}
	}
}

// Numbers that numeric finds equal share a key, those past a double's
// range too (a conflict too many, never an error or one too few), and
// different integers keep different keys at any size int64 holds.
func TestKeyValueNumbers(t *testing.T) {
	same := [][]string{
		{"1", "1.0", "1.000"},
		{"9007199254740993", "9007199254740993.0"},
		{"1e400", "2e400"},
		{"-1e400", "-3.5e999"},
	}
	for _, group := range same {
		var first writeset.Key
		for i, raw := range group {
			v, err := keyValue(json.RawMessage(raw))
			if err != nil {
				t.Fatalf("keyValue(%s): %v", raw, err)
			}
			k := writeset.EncodeKey("t", v)
			if i == 0 {
				first = k
			} else if k != first {
				t.Errorf("%s and %s: different keys", group[0], raw)
			}
		}
	}
	a, _ := keyValue(json.RawMessage("9007199254740993"))
	b, _ := keyValue(json.RawMessage("9007199254740992.0"))
	if writeset.EncodeKey("t", a) == writeset.EncodeKey("t", b) {
		t.Error("9007199254740993 and 9007199254740992.0 share a key")
	}
}

// A row whose unique numeric value is past a double's range commits, as
// one in a table without the index does.
func TestHugeNumericUniqueValue(t *testing.T) {
	f := newBoundaryFixture(t, openEngine(t))
	f.mustDDL("CREATE TABLE m (id int PRIMARY KEY, v numeric UNIQUE)")
	if err := f.statement("INSERT INTO m VALUES (1, 1e400)"); err != nil {
		t.Fatal(err)
	}
}

// A unique index whose values have no exact key (an expression, here
// lower(email)) and an exclusion constraint carry one key for the whole
// index, on a row change that may take or free one of their values: an
// insert, a delete, an update of a column they read. Two nodes that
// insert 'A@x' and 'a@x' then conflict, as they would collide at apply.
func TestCoarseUniqueKeys(t *testing.T) {
	f := newBoundaryFixture(t, openEngine(t))
	f.mustDDL(
		"CREATE TABLE users (id int PRIMARY KEY, email text, active boolean, note text)",
		"CREATE UNIQUE INDEX users_email ON users (lower(email)) WHERE active",
		"CREATE TABLE rooms (id int PRIMARY KEY, room int, during int4range, EXCLUDE USING gist (during WITH &&))",
	)
	if err := f.statement("INSERT INTO users VALUES (1, 'a@x', true, 'n'), (2, 'b@x', false, 'n')"); err != nil {
		t.Fatal(err)
	}
	if err := f.statement("INSERT INTO rooms VALUES (1, 1, '[1,5)')"); err != nil {
		t.Fatal(err)
	}
	email := uniqueKeyOf("users", uniquePrefix("users_email"), nil)
	during := uniqueKeyOf("rooms", uniquePrefix("rooms_during_excl"), nil)
	for stmt, want := range map[string]bool{
		"INSERT INTO users VALUES (3, 'C@X', true, 'n')": true,
		"DELETE FROM users WHERE id = 1":                 true,
		"UPDATE users SET email = 'c@x' WHERE id = 1":    true,
		"UPDATE users SET active = true WHERE id = 2":    true, // the predicate's column
		"UPDATE users SET note = 'changed' WHERE id = 1": false,
		"UPDATE users SET email = 'a@x' WHERE id = 1":    false, // the same value
		"INSERT INTO rooms VALUES (2, 2, '[7,9)')":       true,
		"UPDATE rooms SET room = 3 WHERE id = 1":         false,
		"UPDATE rooms SET during = '[2,3)' WHERE id = 1": true,
	} {
		keys := f.captured(stmt)
		k := email
		if strings.Contains(stmt, "rooms") {
			k = during
		}
		if got := slices.Contains(keys, k); got != want {
			t.Errorf("%s: whole-index key %v, want %v (keys %q)", stmt, got, want, keys)
		}
	}
}
