package sqlite

import (
	"testing"

	"zombiezen.com/go/sqlite"

	"certa/sqlerr"
)

// PostgreSQL's LIKE: case matters, _ and % are wildcards, \ escapes by
// default (ESCAPE names another, or ” none), and a pattern may not end
// with its escape character.
func TestLike(t *testing.T) {
	for _, c := range []struct {
		s, pattern string
		escape     rune
		want       bool
		code       string
	}{
		{"Alice", "A%", '\\', true, ""},
		{"alice", "A%", '\\', false, ""},
		{"abc", "a_c", '\\', true, ""},
		{"abc", "a_", '\\', false, ""},
		{"a_c", `a\_c`, '\\', true, ""},
		{"abc", `a\_c`, '\\', false, ""},
		{"50% off", "50!%%", '!', true, ""},
		{"50 off", "50!%%", '!', false, ""},
		{"a%", "a%", -1, true, ""},
		{"", "%", '\\', true, ""},
		{"", "_", '\\', false, ""},
		{"aaa", "%a%a%a%", '\\', true, ""},
		{"ab", "%a%a%", '\\', false, ""},
		{"Ünï", "_n_", '\\', true, ""},
		{"abc", `abc\`, '\\', false, "22025"},
	} {
		got, err := like([]rune(c.s), []rune(c.pattern), c.escape)
		if c.code != "" {
			if sqlerr.Code(err) != c.code {
				t.Errorf("%q LIKE %q: %v, want %s", c.s, c.pattern, err, c.code)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q LIKE %q ESCAPE %q: %v %v, want %v", c.s, c.pattern, c.escape, got, err, c.want)
		}
	}
	// bytea LIKE bytea matches the bytes, not their hex text.
	fail := func(e *sqlerr.Error) (sqlite.Value, error) { t.Fatal(e); return sqlite.Value{}, nil }
	b := func(s string) sqlite.Value { return sqlite.BlobValue([]byte(s)) }
	for args, want := range map[[3]string]int64{{"a_c", "a$__", "$"}: 1, {"abc", "a$__", "$"}: 0, {"abc", "a%", ""}: 1} {
		in := []sqlite.Value{b(args[0]), b(args[1])}
		if args[2] != "" {
			in = append(in, b(args[2]))
		}
		if v, _ := likeValue(in, false, fail); v.Int64() != want {
			t.Errorf("bytea %q LIKE %q ESCAPE %q: %d, want %d", args[0], args[1], args[2], v.Int64(), want)
		}
	}
}

// substring(s FROM start FOR count) takes the characters at positions
// start .. start+count-1 that exist.
func TestSubstr(t *testing.T) {
	var failed *sqlerr.Error
	fail := func(e *sqlerr.Error) (sqlite.Value, error) { failed = e; return sqlite.Value{}, nil }
	text, n := sqlite.TextValue, sqlite.IntegerValue
	for _, c := range []struct {
		args []sqlite.Value
		want string
	}{
		{[]sqlite.Value{text("Alice"), n(2), n(3)}, "lic"},
		{[]sqlite.Value{text("Alice"), n(0), n(3)}, "Al"},
		{[]sqlite.Value{text("Alice"), n(-1), n(3)}, "A"},
		{[]sqlite.Value{text("Alice"), n(3)}, "ice"},
		{[]sqlite.Value{text("Alice"), n(9)}, ""},
		{[]sqlite.Value{text("Ünïcode"), n(2), n(2)}, "nï"},
		{[]sqlite.Value{text("abc"), n(-1 << 62), n(1<<63 - 1)}, "abc"},
	} {
		v, _ := substrValue(c.args, fail)
		if v.Text() != c.want {
			t.Errorf("substring%v = %q, want %q", c.args, v.Text(), c.want)
		}
	}
	if substrValue([]sqlite.Value{text("abc"), n(1), n(-1)}, fail); failed == nil || failed.Code != "22011" {
		t.Fatalf("negative length: %v", failed)
	}
}

// GREATEST and LEAST skip NULLs.
func TestExtreme(t *testing.T) {
	null := sqlite.Value{}
	args := []sqlite.Value{null, sqlite.IntegerValue(3), sqlite.FloatValue(2.5), null}
	if v := extreme(args, 1); v.Int64() != 3 {
		t.Fatalf("greatest %v", v)
	}
	if v := extreme(args, -1); v.Float() != 2.5 {
		t.Fatalf("least %v", v)
	}
	if v := extreme([]sqlite.Value{null, null}, 1); v.Type() != sqlite.TypeNull {
		t.Fatalf("greatest of NULLs %v", v)
	}
}

// trim, btrim, ltrim and rtrim of bytea take bytes off (SQLite's read a
// blob as text ending at its first zero byte: empty here), of text the
// characters given or spaces.
func TestTrim(t *testing.T) {
	e := openTest(t, Config{})
	wantRows(t, e.query(`SELECT trim(E'\\000'::bytea FROM E'\\000Tom\\000'::bytea), trim(leading E'\\000'::bytea FROM E'\\000Tom\\000'::bytea),
		rtrim(E'\\000Tom\\000'::bytea, E'\\000'::bytea), btrim(''::bytea, E'\\000'::bytea)`),
		row([]byte("Tom"), []byte("Tom\x00"), []byte("\x00Tom"), []byte{}))
	wantRows(t, e.query(`SELECT trim('  ab  '), trim(both 'xy' FROM 'xyabyx'), ltrim('ééa', 'é'), rtrim('a  '), btrim(NULL)`),
		row("ab", "ab", "a", "a", nil))
}

// -> and ->> return a member as PostgreSQL does: as written in the value
// (a jsonb's in jsonb's form, a json's as the client wrote it), ->> a
// string's text and other values' JSON, of null NULL. SQLite's wrote
// JSON its own way ([1,2]) and ->> gave numbers and booleans as SQL
// values (1.5, 1).
func TestJSONMembers(t *testing.T) {
	e := openTest(t, Config{})
	e.ddl("CREATE TABLE js (id int PRIMARY KEY, j jsonb, t json)")
	e.commit(`INSERT INTO js VALUES (1, '{"a": {"b":1}, "c": [1,2], "x": 1.50, "y": true, "n": null, "s": "q\"r"}', '{"a": {"b":1},  "c": [1,  2]}')`)
	wantRows(t, e.query(`SELECT j -> 'a', j -> 'c' -> -1, t -> 'c', j ->> 'x', j ->> 'y', j ->> 'n', j -> 'n', j ->> 's', j -> 'zz', t -> 0 FROM js`),
		row(`{"b": 1}`, "2", "[1,  2]", "1.50", "true", nil, "null", `q"r`, nil, nil))
	wantRows(t, e.query(`SELECT '["a", [1,2]]'::jsonb -> 1, '["a", [1,2]]'::json -> 1, '["a"]'::jsonb ->> 0`), row("[1, 2]", "[1,2]", "a"))
	wantRows(t, e.query(`SELECT count(*) FROM js WHERE j ->> 'c' = '[1, 2]' AND (j -> 'a' ->> 'b')::int = 1`), row(int64(1)))
}

// json's -> and ->> resolve the document's escapes and refuse those
// PostgreSQL refuses, as its json operators do (json input keeps them).
func TestJSONGetEscapes(t *testing.T) {
	e := openTest(t, Config{})
	tx := e.begin()
	for sql, code := range map[string]string{
		`SELECT '{"a": "\ud83d\ud83d"}'::json -> 'a'`: sqlerr.InvalidTextRepresentation,
		`SELECT '{"a": "\ude04X"}'::json ->> 'a'`:     sqlerr.InvalidTextRepresentation,
		`SELECT '{"a": "\u0000"}'::json -> 'a'`:       sqlerr.UntranslatableCharacter,
	} {
		if got, err := execErr(tx, sql); got != code {
			t.Errorf("%s: %v, want %s", sql, err, code)
		}
	}
	wantRows(t, exec(t, tx, `SELECT '{"a": "\ud83d\ude04"}'::json ->> 'a', '{"a": "\u0000"}'::json::text`).rows,
		row("😄", `{"a": "\u0000"}`))
}
