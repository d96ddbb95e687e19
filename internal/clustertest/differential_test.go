package clustertest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"certa/internal/pgclient"
)

// testSeed is the seed of a randomised test: CERTA_TEST_SEED when set (to
// replay a failure), else the clock. It is logged either way.
func testSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("CERTA_TEST_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CERTA_TEST_SEED: %v", err)
		}
		seed = v
	}
	t.Logf("seed %d (replay with CERTA_TEST_SEED=%d)", seed, seed)
	return seed
}

// diffTable is one table of the differential test: its DDL and how to name
// and order its rows.
type diffTable struct {
	name, ddl, key string
	keyVals        func(r *rand.Rand) string // a key's values, SQL literals, comma-separated
	// shifted is the key of a row that INSERT ... SELECT copies to a new
	// key; "" to set the key column id NULL instead (UPDATE).
	shifted string
	// moveKey is an assignment that changes a row's key; "" to set k NULL
	// instead.
	moveKey string
}

var diffTables = []diffTable{
	{"ti", "CREATE TABLE ti (id integer PRIMARY KEY, k integer, v text)", "id",
		func(r *rand.Rand) string { return diffInt(r) }, "id + 1000", "id = id + 100"},
	{"tb", "CREATE TABLE tb (id bigint PRIMARY KEY, k integer, v text)", "id",
		func(r *rand.Rand) string { return diffInt(r) }, "id + 1000", "id = id + 100"},
	{"tt", "CREATE TABLE tt (id text PRIMARY KEY, k integer, v text)", "id",
		func(r *rand.Rand) string { return diffText(r) }, "id || 'x'", ""},
	{"tc", "CREATE TABLE tc (a text, id integer, k integer, v text, PRIMARY KEY (a, id))", "a, id",
		func(r *rand.Rand) string { return diffText(r) + ", " + diffInt(r) }, "", ""},
	// Children of ti by k: inserts and updates of k meet missing parents
	// (23503); deletes and key updates of ti set k NULL or follow.
	{"tf", "CREATE TABLE tf (id integer PRIMARY KEY, k integer REFERENCES ti (id) ON DELETE SET NULL ON UPDATE CASCADE, v text)", "id",
		func(r *rand.Rand) string { return diffInt(r) }, "id + 1000", "id = id + 100"},
	{"tg", "CREATE TABLE tg (id integer PRIMARY KEY, k integer REFERENCES ti (id) ON DELETE CASCADE, v text)", "id",
		func(r *rand.Rand) string { return diffInt(r) }, "id + 1000", "id = id + 100"},
	// Defaults fill what an INSERT leaves out; v may not be NULL (23502).
	{"td", "CREATE TABLE td (id varchar(10) PRIMARY KEY, k integer DEFAULT 7, v text NOT NULL DEFAULT 'dflt')", "id",
		func(r *rand.Rand) string { return diffText(r) }, "id || 'x'", ""},
	// A numeric(8,2) key: 1.5 and 1.50 are one key; values print with
	// two decimals.
	{"tn", "CREATE TABLE tn (id numeric(8,2) PRIMARY KEY, k integer, v text)", "id",
		func(r *rand.Rand) string {
			if r.IntN(12) == 0 {
				return "NULL"
			}
			return fmt.Sprintf("%d.%s", r.IntN(8), []string{"0", "25", "5", "50", "75"}[r.IntN(5)])
		}, "id + 1000", "id = id + 100"},
}

// randomDiffTable is a table of a random schema: one or two key columns of
// random types and collations, a k column that may have a default, NOT NULL or a foreign
// key to ti (with a random action), and a v column that may be NOT NULL
// with a default or a varchar(5).
func randomDiffTable(r *rand.Rand, name string) diffTable {
	type keyType struct {
		decl  string
		val   func(r *rand.Rand) string
		shift string // %s: the column
		moves bool   // "c = c + 100" moves a key
	}
	numeric := func(r *rand.Rand) string {
		if r.IntN(12) == 0 {
			return "NULL"
		}
		return fmt.Sprintf("%d.%d", r.IntN(10), r.IntN(3)*5)
	}
	types := []keyType{
		{"integer", diffInt, "%s + 1000", true},
		{"bigint", diffInt, "%s + 1000", true},
		{"smallint", diffInt, "%s + 1000", true},
		{"text", diffText, "%s || 'x'", false},
		{"varchar(6)", diffText, "%s || 'x'", false},
		{`text COLLATE "C"`, diffText, "%s || 'x'", false},
		{"numeric(8,2)", numeric, "%s + 1000", true},
	}
	t := diffTable{name: name}
	var cols, keys, shifted []string
	var gens []func(r *rand.Rand) string
	for i := range 1 + r.IntN(2) {
		kt := types[r.IntN(len(types))]
		col := fmt.Sprintf("c%d", i+1)
		cols = append(cols, col+" "+kt.decl)
		keys = append(keys, col)
		gens = append(gens, kt.val)
		if i == 0 {
			shifted = append(shifted, fmt.Sprintf(kt.shift, col))
			if kt.moves {
				t.moveKey = fmt.Sprintf("%s = %s + 100", col, col)
			}
		} else {
			shifted = append(shifted, col)
		}
	}
	k := []string{"", " DEFAULT 7", " NOT NULL DEFAULT 0", " REFERENCES ti (id) ON DELETE CASCADE",
		" REFERENCES ti (id) ON DELETE SET NULL ON UPDATE CASCADE", " REFERENCES ti (id)"}[r.IntN(6)]
	v := []string{"text", "text NOT NULL DEFAULT 'dflt'", "varchar(5)"}[r.IntN(3)]
	cols = append(cols, "k integer"+k, "v "+v)
	t.key = strings.Join(keys, ", ")
	t.ddl = fmt.Sprintf("CREATE TABLE %s (%s, PRIMARY KEY (%s))", name, strings.Join(cols, ", "), t.key)
	t.shifted = strings.Join(shifted, ", ")
	t.keyVals = func(r *rand.Rand) string {
		vals := make([]string, len(gens))
		for i, g := range gens {
			vals[i] = g(r)
		}
		return strings.Join(vals, ", ")
	}
	return t
}

// diffInt is a key value from a small domain (so that statements meet),
// sometimes NULL.
func diffInt(r *rand.Rand) string {
	if r.IntN(12) == 0 {
		return "NULL"
	}
	return fmt.Sprint(r.IntN(30))
}

func diffText(r *rand.Rand) string {
	if r.IntN(12) == 0 {
		return "NULL"
	}
	return fmt.Sprintf("'k%d'", r.IntN(20))
}

func diffValue(r *rand.Rand) string {
	switch r.IntN(5) {
	case 0:
		return "NULL"
	case 1:
		return "'it''s'"
	default:
		return fmt.Sprintf("'v%d'", r.IntN(100))
	}
}

// diffStatement is a random statement on table t.
func diffStatement(r *rand.Rand, t diffTable) string {
	cols := t.key + ", k, v"
	row := func() string { return fmt.Sprintf("(%s, %d, %s)", t.keyVals(r), r.IntN(10), diffValue(r)) }
	switch r.IntN(10) {
	case 9:
		return fmt.Sprintf("INSERT INTO %s (%s) VALUES (%s)", t.name, t.key, t.keyVals(r))
	case 0, 1:
		rows := []string{row()}
		for r.IntN(2) == 0 {
			rows = append(rows, row())
		}
		return fmt.Sprintf("INSERT INTO %s (%s) VALUES %s", t.name, cols, strings.Join(rows, ", "))
	case 2:
		return fmt.Sprintf("INSERT INTO %s (%s) VALUES %s ON CONFLICT (%s) DO UPDATE SET k = excluded.k, v = excluded.v", t.name, cols, row(), t.key)
	case 3:
		return fmt.Sprintf("INSERT INTO %s (%s) VALUES %s ON CONFLICT (%s) DO NOTHING", t.name, cols, row(), t.key)
	case 4:
		return fmt.Sprintf("INSERT INTO %s (%s) VALUES %s RETURNING k, v", t.name, cols, row())
	case 5:
		return fmt.Sprintf("UPDATE %s SET k = k + 1, v = %s WHERE k < %d", t.name, diffValue(r), r.IntN(10))
	case 6:
		if t.moveKey == "" {
			return fmt.Sprintf("UPDATE %s SET k = NULL WHERE k = %d", t.name, r.IntN(10))
		}
		return fmt.Sprintf("UPDATE %s SET %s WHERE k = %d", t.name, t.moveKey, r.IntN(10))
	case 7:
		return fmt.Sprintf("DELETE FROM %s WHERE k = %d", t.name, r.IntN(10))
	default:
		if t.shifted == "" {
			return fmt.Sprintf("UPDATE %s SET id = NULL WHERE k = %d", t.name, r.IntN(10))
		}
		return fmt.Sprintf("INSERT INTO %s (%s) SELECT %s, k, v FROM %s WHERE k = %d", t.name, cols, t.shifted, t.name, r.IntN(10))
	}
}

// diffOutcome runs a transaction's statements and returns what happened:
// "ok", or the SQLSTATEs of the errors it met. A transaction of several
// statements takes a savepoint after its first one; an error after it is
// undone with ROLLBACK TO SAVEPOINT and the transaction goes on (as GORM's
// nested transactions do); an error before it rolls the whole back.
func diffOutcome(ctx context.Context, c *pgclient.Conn, stmts []string) (string, error) {
	if len(stmts) == 1 {
		_, err := c.Exec(ctx, stmts[0])
		return outcome(err)
	}
	if _, err := c.Exec(ctx, "BEGIN"); err != nil {
		return "", err
	}
	var codes []string
	for i, s := range stmts {
		_, err := c.Exec(ctx, s)
		code, oerr := outcome(err)
		if oerr != nil {
			return "", oerr
		}
		codes = append(codes, code)
		switch {
		case err != nil && i == 0:
			if _, rerr := c.Exec(ctx, "ROLLBACK"); rerr != nil {
				return "", rerr
			}
			return code, nil
		case err != nil:
			if _, rerr := c.Exec(ctx, "ROLLBACK TO SAVEPOINT sp"); rerr != nil {
				return "", rerr
			}
		case i == 0:
			if _, serr := c.Exec(ctx, "SAVEPOINT sp"); serr != nil {
				return "", serr
			}
		}
	}
	_, err := c.Exec(ctx, "COMMIT")
	code, oerr := outcome(err)
	return strings.Join(append(codes, code), ","), oerr
}

func outcome(err error) (string, error) {
	if err == nil {
		return "ok", nil
	}
	if code := pgclient.SQLState(err); code != "" {
		return code, nil
	}
	return "", err
}

// diffContents returns every table's rows, in key order, as text.
func diffContents(ctx context.Context, c *pgclient.Conn, tables []diffTable) (string, error) {
	var b strings.Builder
	for _, t := range tables {
		rows, err := c.QueryText(ctx, fmt.Sprintf("SELECT %s, k, v FROM %s ORDER BY %s", t.key, t.name, t.key))
		if err != nil {
			return "", fmt.Errorf("%s: %w", t.name, err)
		}
		fmt.Fprintf(&b, "%s:", t.name)
		for _, r := range rows {
			fmt.Fprintf(&b, " %v", r)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// Issue 16: on eight fixed tables and four of random schema (randomDiffTable),
// random transactions of multi-row INSERTs, upserts, RETURNING,
// INSERT ... SELECT, key updates, NULL keys, defaults, DELETEs, foreign keys (with
// ON DELETE SET NULL, ON UPDATE CASCADE, ON DELETE CASCADE) and savepoints run on random nodes
// of a 3-node cluster and on a real PostgreSQL server; every transaction
// must have the same outcome (committed, or the same SQLSTATE) and every
// node the same contents as PostgreSQL after it.
func TestDifferentialAgainstPostgreSQL(t *testing.T) {
	forEachEngine(t, testDifferentialAgainstPostgreSQL)
}

func testDifferentialAgainstPostgreSQL(t *testing.T, start startFunc) {
	c := start(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ref := startReference(t, ctx, false)
	nodes := make([]*pgclient.Conn, len(c.Nodes))
	for i := range nodes {
		nodes[i] = syncConn(t, c, i)
	}
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(seed, 16))
	tables := slices.Clone(diffTables)
	for i := range 4 {
		tables = append(tables, randomDiffTable(r, fmt.Sprintf("r%d", i)))
	}
	for _, tb := range tables {
		t.Logf("%s", tb.ddl)
		mustExec(t, ref, tb.ddl)
		mustExec(t, nodes[0], tb.ddl)
	}
	for n := range 150 {
		stmts := make([]string, 1+r.IntN(3))
		for i := range stmts {
			stmts[i] = diffStatement(r, tables[r.IntN(len(tables))])
		}
		want, err := diffOutcome(ctx, ref, stmts)
		if err != nil {
			t.Fatalf("PostgreSQL: %v", err)
		}
		node := r.IntN(len(nodes))
		var got string
		for try := 0; ; try++ { // a sync session's transaction may still lose certification
			if got, err = diffOutcome(ctx, nodes[node], stmts); err != nil {
				t.Fatalf("node %d: %v", node, err)
			}
			if !strings.Contains(got, "40001") || try == 5 {
				break
			}
		}
		if got != want {
			t.Fatalf("transaction %d on node %d: certa %s, PostgreSQL %s:\n%s", n, node, got, want, strings.Join(stmts, ";\n"))
		}
		wantRows, err := diffContents(ctx, ref, tables)
		if err != nil {
			t.Fatal(err)
		}
		for i, conn := range nodes {
			gotRows, err := diffContents(ctx, conn, tables)
			if err != nil {
				t.Fatalf("node %d: %v", i, err)
			}
			if gotRows != wantRows {
				t.Fatalf("after transaction %d (%s on node %d):\n%s\nnode %d holds\n%s\nPostgreSQL holds\n%s",
					n, got, node, strings.Join(stmts, ";\n"), i, gotRows, wantRows)
			}
		}
	}
	c.WaitConverged(20 * time.Second)
}

// identityTables are the tables of TestDifferentialIdentity. Generated ids
// differ between certa (blocks of values per node) and PostgreSQL, so
// statements give explicit ids from 500000 to 500019, and contents compare
// only those (another node's generated ids are far larger).
var identityTables = []string{
	"CREATE TABLE ia (id int GENERATED ALWAYS AS IDENTITY PRIMARY KEY, k int NOT NULL UNIQUE, v text)",
	"CREATE TABLE ib (id bigint GENERATED BY DEFAULT AS IDENTITY (START WITH 50 MAXVALUE 400000) PRIMARY KEY, k int NOT NULL UNIQUE, v text DEFAULT 'dflt')",
}

// identityStatement is a random statement on the identity tables.
func identityStatement(r *rand.Rand) string {
	k := func() int { return r.IntN(15) }
	id := func() int { return 500000 + r.IntN(20) }
	v := func() string { return diffValue(r) }
	t := []string{"ia", "ib"}[r.IntN(2)]
	switch r.IntN(17) {
	case 0:
		return fmt.Sprintf("INSERT INTO %s (k, v) VALUES (%d, %s)", t, k(), v())
	case 1:
		return fmt.Sprintf("INSERT INTO %s VALUES (DEFAULT, %d, %s)", t, k(), v())
	case 2:
		return fmt.Sprintf("INSERT INTO %s (id, k, v) VALUES (DEFAULT, %d, %s), (DEFAULT, %d, DEFAULT)", t, k(), v(), k())
	case 3:
		return fmt.Sprintf("INSERT INTO %s (id, k, v) VALUES (DEFAULT, %d, %s), (%d, %d, %s)", t, k(), v(), id(), k(), v())
	case 4:
		return fmt.Sprintf("INSERT INTO %s VALUES (%d, %d, %s)", t, id(), k(), v())
	case 5:
		return fmt.Sprintf("INSERT INTO %s OVERRIDING SYSTEM VALUE VALUES (%d, %d, %s)", t, id(), k(), v())
	case 6:
		return fmt.Sprintf("INSERT INTO %s (id, k, v) OVERRIDING USER VALUE VALUES (%d, %d, %s)", t, id(), k(), v())
	case 7:
		return fmt.Sprintf("INSERT INTO %s (id, k, v) SELECT %d, %d, %s", t, id(), k(), v())
	case 8:
		return fmt.Sprintf("INSERT INTO %s (id, k, v) OVERRIDING SYSTEM VALUE SELECT %d, %d, %s", t, id(), k(), v())
	case 9:
		return fmt.Sprintf("INSERT INTO %s (k, v) SELECT k + 15, v FROM %s WHERE k = %d", t, t, k())
	case 10:
		return fmt.Sprintf("UPDATE %s SET id = %d WHERE k = %d", t, id(), k())
	case 11:
		return fmt.Sprintf("UPDATE %s SET id = DEFAULT, v = %s WHERE k = %d", t, v(), k())
	case 12:
		return fmt.Sprintf("UPDATE %s SET v = DEFAULT WHERE k = %d", t, k())
	case 13:
		return fmt.Sprintf("INSERT INTO %s (k, v) VALUES (%d, %s) ON CONFLICT (k) DO UPDATE SET id = %d", t, k(), v(), id())
	case 14:
		return fmt.Sprintf("INSERT INTO %s (k, v) VALUES (%d, %s) ON CONFLICT (k) DO UPDATE SET v = excluded.v, id = DEFAULT", t, k(), v())
	case 15:
		return fmt.Sprintf("UPDATE %s SET (v, id) = (%s, %d) WHERE k = %d", t, v(), id(), k())
	default:
		return fmt.Sprintf("DELETE FROM %s WHERE k = %d", t, k())
	}
}

// identityContents returns the identity tables' rows in k order, with the
// ids that were given explicitly (generated ones differ by design).
func identityContents(ctx context.Context, c *pgclient.Conn) (string, error) {
	var b strings.Builder
	for _, t := range []string{"ia", "ib"} {
		rows, err := c.QueryText(ctx, "SELECT k, v, CASE WHEN id BETWEEN 500000 AND 599999 THEN id END FROM "+t+" ORDER BY k")
		if err != nil {
			return "", fmt.Errorf("%s: %w", t, err)
		}
		fmt.Fprintf(&b, "%s:", t)
		for _, r := range rows {
			fmt.Fprintf(&b, " %v", r)
		}
		b.WriteString("\n")
	}
	return b.String(), nil
}

// Identity columns: random transactions of INSERTs with DEFAULT, explicit
// ids, OVERRIDING SYSTEM VALUE and USER VALUE, INSERT ... SELECT, UPDATEs
// of the id (to a value or DEFAULT), ON CONFLICT DO UPDATE and DELETEs on a
// GENERATED ALWAYS and a GENERATED BY DEFAULT table run on random nodes of
// a 3-node cluster and on PostgreSQL: every transaction must have the same
// outcome (428C9 where PostgreSQL refuses a value), and every node the same
// rows as PostgreSQL. The refusals carry PostgreSQL's message, detail and
// hint, through the simple and the extended protocol.
func TestDifferentialIdentity(t *testing.T) {
	forEachEngine(t, testDifferentialIdentity)
}

func testDifferentialIdentity(t *testing.T, start startFunc) {
	c := start(t, 3)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ref := startReference(t, ctx, false)
	nodes := make([]*pgclient.Conn, len(c.Nodes))
	for i := range nodes {
		nodes[i] = syncConn(t, c, i)
	}
	for _, ddl := range identityTables {
		mustExec(t, ref, ddl)
		mustExec(t, nodes[0], ddl)
	}
	// The errors are PostgreSQL's, whichever protocol carries them.
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"INSERT INTO ia VALUES (500000, 1, 'x')", nil},
		{"INSERT INTO ia (id, k) VALUES ($1, $2)", []any{500000, 1}},
		{"UPDATE ia SET id = 500000", nil},
		{"UPDATE ia SET id = $1 WHERE k = $2", []any{500000, 1}},
	} {
		_, wantErr := ref.Exec(ctx, q.sql, q.args...)
		_, gotErr := nodes[1].Exec(ctx, q.sql, q.args...)
		want := fmt.Sprint(pgclient.ErrorFields(wantErr))
		got := fmt.Sprint(pgclient.ErrorFields(gotErr))
		if pgclient.SQLState(wantErr) != "428C9" || got != want {
			t.Fatalf("%s: certa %v (%v), PostgreSQL %v", q.sql, got, gotErr, want)
		}
	}
	seed := testSeed(t)
	r := rand.New(rand.NewPCG(seed, 17))
	outcomes := map[string]int{}
	defer func() { t.Logf("statement outcomes: %v", outcomes) }()
	for n := range 120 {
		stmts := make([]string, 1+r.IntN(3))
		for i := range stmts {
			stmts[i] = identityStatement(r)
		}
		want, err := diffOutcome(ctx, ref, stmts)
		if err != nil {
			t.Fatalf("PostgreSQL: %v", err)
		}
		node := r.IntN(len(nodes))
		var got string
		for try := 0; ; try++ {
			if got, err = diffOutcome(ctx, nodes[node], stmts); err != nil {
				t.Fatalf("node %d: %v", node, err)
			}
			if !strings.Contains(got, "40001") || try == 5 {
				break
			}
		}
		if got != want {
			t.Fatalf("transaction %d on node %d: certa %s, PostgreSQL %s:\n%s", n, node, got, want, strings.Join(stmts, ";\n"))
		}
		for _, o := range strings.Split(got, ",") {
			outcomes[o]++
		}
		wantRows, err := identityContents(ctx, ref)
		if err != nil {
			t.Fatal(err)
		}
		for i, conn := range nodes {
			gotRows, err := identityContents(ctx, conn)
			if err != nil {
				t.Fatalf("node %d: %v", i, err)
			}
			if gotRows != wantRows {
				t.Fatalf("after transaction %d (%s on node %d):\n%s\nnode %d holds\n%s\nPostgreSQL holds\n%s",
					n, got, node, strings.Join(stmts, ";\n"), i, gotRows, wantRows)
			}
		}
	}
	c.WaitConverged(20 * time.Second)
}
