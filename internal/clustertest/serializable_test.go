package clustertest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"certa/internal/pgclient"
	"certa/internal/pgserver"
)

// The cases of shared/hermitage.md where SERIALIZABLE differs from
// snapshot isolation, with every transaction serializable: on PostgreSQL
// 15 first (which must give the outcome the table gives), then through
// certa on each engine, all sessions on one node and on different nodes.
var serializableCases = []hermitageCase{
	{"12 G2-item write skew", func(t *testing.T, t1, t2, t3 *session, final func() string) {
		expectEq(t, t1.do("SELECT id, value FROM test WHERE id IN (1, 2) ORDER BY id"), "1=10,2=20")
		expectEq(t, t2.do("SELECT id, value FROM test WHERE id IN (1, 2) ORDER BY id"), "1=10,2=20")
		t1.do("UPDATE test SET value = 11 WHERE id = 1")
		t2.do("UPDATE test SET value = 21 WHERE id = 2")
		t1.do("COMMIT")
		t2.do("COMMIT")
		expect(t, !t1.failed && t2.failed, "T1 commits, T2 fails")
		expectEq(t, final(), "1=11,2=20")
	}},
	{"13 G2 anti-dependency cycle on predicates", func(t *testing.T, t1, t2, t3 *session, final func() string) {
		expectEq(t, t1.do("SELECT id, value FROM test WHERE value % 3 = 0 ORDER BY id"), "")
		expectEq(t, t2.do("SELECT id, value FROM test WHERE value % 3 = 0 ORDER BY id"), "")
		t1.do("INSERT INTO test VALUES (3, 30)")
		t2.do("INSERT INTO test VALUES (4, 42)")
		t1.do("COMMIT")
		t2.do("COMMIT")
		expect(t, !t1.failed && t2.failed, "T1 commits, T2 fails")
		expectEq(t, final(), "1=10,2=20,3=30")
	}},
	// The predicate is a range of the key: certa certifies the range
	// (a row inserted into it is a phantom), not the whole table.
	{"13b G2 phantom in a key range", func(t *testing.T, t1, t2, t3 *session, final func() string) {
		expectEq(t, t1.do("SELECT id, value FROM test WHERE id BETWEEN 3 AND 10 ORDER BY id"), "")
		expectEq(t, t2.do("SELECT id, value FROM test WHERE id >= 3 AND id < 10 ORDER BY id"), "")
		t1.do("INSERT INTO test VALUES (3, 30)")
		t2.do("INSERT INTO test VALUES (4, 42)")
		t1.do("COMMIT")
		t2.do("COMMIT")
		expect(t, !t1.failed && t2.failed, "T1 commits, T2 fails")
		expectEq(t, final(), "1=10,2=20,3=30")
	}},
	{"14 G2 read-only anomaly (Fekete)", func(t *testing.T, t1, t2, t3 *session, final func() string) {
		expectEq(t, t1.do("SELECT id, value FROM test ORDER BY id"), "1=10,2=20")
		t2.do("UPDATE test SET value = 25 WHERE id = 2")
		t2.do("COMMIT")
		expectEq(t, t3.do("SELECT id, value FROM test ORDER BY id"), "1=10,2=25")
		t3.do("COMMIT")
		t1.do("UPDATE test SET value = 0 WHERE id = 1")
		t1.do("COMMIT")
		expect(t, !t2.failed && t1.failed != t3.failed, "T2 commits, one of T1 and T3 fails")
	}},
}

func TestHermitageSerializable(t *testing.T) {
	pg := pgserver.Start(t)
	t.Run("postgresql", func(t *testing.T) {
		for i, hc := range serializableCases {
			t.Run(hc.name, func(t *testing.T) {
				table := fmt.Sprintf("ser%d", i+1)
				open := func() *pgclient.Conn {
					conn, err := pgclient.ConnectString(ctxT(t), pg.DSN)
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { conn.Close() })
					return conn
				}
				runSerializableCase(t, hc, table, open(), func(int) *pgclient.Conn { return open() }, func() *pgclient.Conn { return open() })
			})
		}
	})
	forEachEngine(t, func(t *testing.T, start startFunc) {
		for _, cross := range []bool{false, true} {
			t.Run(map[bool]string{false: "same_node", true: "cross_node"}[cross], func(t *testing.T) {
				c := start(t, 3)
				for i, hc := range serializableCases {
					t.Run(hc.name, func(t *testing.T) {
						conn := func(k int) *pgclient.Conn {
							node := 0
							if cross {
								node = k
							}
							cn := c.ConnFor(t, node)
							mustExec(t, cn, "SET certa.consistency = 'sync'")
							return cn
						}
						runSerializableCase(t, hc, fmt.Sprintf("ser%d", i+1), c.Conn(0), conn, func() *pgclient.Conn { return syncConn(t, c, 2) })
					})
				}
			})
		}
	})
}

// runSerializableCase makes table with rows (1, 10), (2, 20) through setup,
// and runs hc with three serializable transactions on conn(0..2).
func runSerializableCase(t *testing.T, hc hermitageCase, table string, setup *pgclient.Conn, conn func(k int) *pgclient.Conn, reader func() *pgclient.Conn) {
	mustExec(t, setup, fmt.Sprintf("CREATE TABLE %s (id integer PRIMARY KEY, value integer)", table))
	mustExec(t, setup, fmt.Sprintf("INSERT INTO %s VALUES (1, 10), (2, 20)", table))
	var s [3]*session
	for k := range s {
		s[k] = &session{t: t, name: fmt.Sprintf("T%d", k+1), conn: conn(k), table: table}
		s[k].do("BEGIN ISOLATION LEVEL SERIALIZABLE")
	}
	final := func() string { return values(t, reader(), "SELECT id, value FROM "+table+" ORDER BY id") }
	hc.run(t, s[0], s[1], s[2], final)
}

// current_setting of the transaction's characteristics answers as SHOW
// does and as PostgreSQL answers, on the PostgreSQL engine, whose server
// runs every transaction at REPEATABLE READ and its reads READ ONLY: the
// level asked for (read committed by default), whether the block is read
// only (a SET TRANSACTION READ ONLY ends with its savepoint) and
// deferrable.
func TestIsolationSettingAsPostgreSQL(t *testing.T) {
	pg := pgserver.Start(t)
	ref, err := pgclient.ConnectString(ctxT(t), pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	c := startPostgresCluster(t, 1)
	steps := []string{
		"BEGIN ISOLATION LEVEL SERIALIZABLE",
		"SELECT 0, current_setting('transaction_isolation')",
		"SELECT 0, pg_catalog.current_setting('TRANSACTION_ISOLATION', true)",
		"COMMIT",
		"BEGIN ISOLATION LEVEL REPEATABLE READ",
		"SELECT 0, current_setting('transaction_isolation')",
		"COMMIT",
		"SET default_transaction_isolation = 'serializable'",
		"SELECT 0, current_setting('transaction_isolation')",
		"BEGIN",
		"SELECT 0, current_setting('transaction_isolation')",
		"COMMIT",
		"RESET default_transaction_isolation",
		"SELECT 0, current_setting('transaction_isolation') || ' ' || current_setting('transaction_read_only')",
		"BEGIN READ ONLY, DEFERRABLE",
		"SELECT 0, current_setting('transaction_read_only') || ' ' || current_setting('transaction_deferrable')",
		"COMMIT",
		"BEGIN",
		"SAVEPOINT a",
		"SET TRANSACTION READ ONLY",
		"SELECT 0, current_setting('transaction_read_only')",
		"RELEASE a",
		"SELECT 0, current_setting('transaction_read_only') || ' ' || current_setting('transaction_isolation')",
		"COMMIT",
	}
	for i, conn := range []*pgclient.Conn{ref, c.Conn(0)} {
		var got []string
		for _, st := range steps {
			if len(st) > 6 && st[:6] == "SELECT" {
				got = append(got, values(t, conn, st))
			} else {
				mustExec(t, conn, st)
			}
		}
		if want := "[0=serializable 0=serializable 0=repeatable read 0=serializable 0=serializable 0=read committed off 0=on on 0=on 0=off read committed]"; fmt.Sprint(got) != want {
			t.Errorf("%s: %v, want %s", []string{"PostgreSQL", "certa"}[i], got, want)
		}
	}
}

// Serializable transactions whose reads are of keys and key ranges
// conflict only where they meet: two that read and write different rows
// of one table both commit, across nodes, while one that read a row
// another wrote, or a range another inserted into, fails; a read the
// engine cannot bound (a predicate on a non-key column, and on the
// PostgreSQL engine a function, a trigger, a view or a rule that reads)
// is of the whole table. (PostgreSQL's own SERIALIZABLE may fail more of
// these, by its page and relation locks.)
func TestSerializableKeyGrain(t *testing.T) {
	forEachEngine(t, testSerializableKeyGrain)
}

func testSerializableKeyGrain(t *testing.T, start startFunc) {
	c := start(t, 3)
	mustExec(t, c.Conn(0), "CREATE TABLE kg (id integer PRIMARY KEY, value integer, other integer)")
	mustExec(t, c.Conn(0), "CREATE INDEX kg_value ON kg (value)")
	mustExec(t, c.Conn(0), "INSERT INTO kg VALUES (1, 10), (2, 20), (20, 200), (60, 888)")
	type keyGrainCase struct {
		name     string
		t1, t2   []string
		t2Failed bool
		arg      int64 // $1 of a statement that has one
	}
	cases := []keyGrainCase{
		{"disjoint keys", []string{"SELECT value FROM kg WHERE id = 1", "UPDATE kg SET value = value + 1 WHERE id = 1"},
			[]string{"SELECT value FROM kg WHERE id = $1", "UPDATE kg SET value = value + 1 WHERE id = 2"}, false, 2},
		{"disjoint ranges", []string{"SELECT sum(value) FROM kg WHERE id BETWEEN 1 AND 5", "INSERT INTO kg VALUES (5, 50)"},
			[]string{"SELECT sum(value) FROM kg WHERE id > 10", "INSERT INTO kg VALUES (11, 110)"}, false, 0},
		{"read key written", []string{"SELECT value FROM kg WHERE id IN (1, 2)", "UPDATE kg SET value = 0 WHERE id = 1"},
			[]string{"SELECT value FROM kg WHERE id = $1", "UPDATE kg SET value = 0 WHERE id = 20"}, true, 1},
		{"phantom in range", []string{"SELECT count(*) FROM kg WHERE id > 15", "INSERT INTO kg VALUES (3, 30)"},
			[]string{"SELECT count(*) FROM kg WHERE id < 4", "INSERT INTO kg VALUES (16, 160)"}, true, 0},
		{"non-key predicate", []string{"SELECT count(*) FROM kg WHERE other > 1000", "INSERT INTO kg VALUES (7, 70)"},
			[]string{"SELECT count(*) FROM kg WHERE other > 1000", "INSERT INTO kg VALUES (8, 80)"}, true, 0},
		// 300 keys read travel as a Bloom filter, which holds every one.
		{"keys in a filter", []string{"SELECT value FROM kg WHERE id = 1", "INSERT INTO kg VALUES (1150, 0)"},
			[]string{"SELECT count(*) FROM kg WHERE id IN (" + intList(1000, 1300) + ")", "UPDATE kg SET value = 0 WHERE id = 2"}, true, 0},
	}
	// A range of an indexed column: rows coming in (inserted, or moved by
	// an update) and rows in it changing fail the reader.
	cases = append(cases,
		keyGrainCase{"index range phantom", []string{"SELECT value FROM kg WHERE id = 1", "INSERT INTO kg VALUES (40, 1500)"},
			[]string{"SELECT count(*) FROM kg WHERE value BETWEEN 1000 AND 2000", "INSERT INTO kg VALUES (41, 3)"}, true, 0},
		keyGrainCase{"index range moved into", []string{"SELECT value FROM kg WHERE id = 1", "UPDATE kg SET value = 1700 WHERE id = 1"},
			[]string{"SELECT count(*) FROM kg WHERE value >= 1600 AND value < 1800", "INSERT INTO kg VALUES (42, 4)"}, true, 0},
		keyGrainCase{"index range row changed", []string{"INSERT INTO kg VALUES (50, 777)", "UPDATE kg SET other = 5 WHERE id = 60"},
			[]string{"SELECT count(*) FROM kg WHERE value = $1", "INSERT INTO kg VALUES (43, 5)"}, true, 888},
		keyGrainCase{"index ranges apart", []string{"SELECT count(*) FROM kg WHERE value BETWEEN 5000 AND 6000", "INSERT INTO kg VALUES (44, 9000)"},
			[]string{"SELECT count(*) FROM kg WHERE value BETWEEN 7000 AND 8000", "INSERT INTO kg VALUES (45, 5500)"}, false, 0},
	)
	// Prefixes (LIKE 'ab%') of a text key and of an indexed text column.
	mustExec(t, c.Conn(0), "CREATE TABLE kt (name text PRIMARY KEY, tag varchar(20), n integer)")
	mustExec(t, c.Conn(0), "CREATE INDEX kt_tag ON kt (tag)")
	mustExec(t, c.Conn(0), "INSERT INTO kt VALUES ('ab1', 'red-1', 0), ('cd1', 'blue-1', 0), ('ef1', 'green-1', 0)")
	cases = append(cases,
		keyGrainCase{"key prefix phantom", []string{"SELECT n FROM kt WHERE name = 'cd1'", "INSERT INTO kt VALUES ('abz', 'x', 0)"},
			[]string{"SELECT count(*) FROM kt WHERE name LIKE 'ab%'", "INSERT INTO kt VALUES ('zz1', 'x', 0)"}, true, 0},
		keyGrainCase{"key prefix row changed", []string{"SELECT n FROM kt WHERE name = 'cd1'", "UPDATE kt SET n = 1 WHERE name = 'ab1'"},
			[]string{"SELECT count(*) FROM kt WHERE name LIKE 'a_1' AND n = 0", "INSERT INTO kt VALUES ('zz2', 'x', 0)"}, true, 0},
		keyGrainCase{"key prefixes apart", []string{"SELECT count(*) FROM kt WHERE name LIKE 'cd%'", "INSERT INTO kt VALUES ('ef2', 'x', 0)"},
			[]string{"SELECT count(*) FROM kt WHERE name LIKE 'gh%'", "INSERT INTO kt VALUES ('cd2', 'x', 0)"}, false, 0},
		keyGrainCase{"index prefix phantom", []string{"SELECT n FROM kt WHERE name = 'cd1'", "INSERT INTO kt VALUES ('r2', 'red-2', 0)"},
			[]string{"SELECT count(*) FROM kt WHERE tag LIKE 'red%'", "INSERT INTO kt VALUES ('zz3', 'x', 0)"}, true, 0},
		keyGrainCase{"index prefix moved into", []string{"SELECT n FROM kt WHERE name = 'cd1'", "UPDATE kt SET tag = 'pink-9' WHERE name = 'ef1'"},
			[]string{"SELECT count(*) FROM kt WHERE tag LIKE 'pink-%'", "INSERT INTO kt VALUES ('zz4', 'x', 0)"}, true, 0},
		keyGrainCase{"index prefixes apart", []string{"SELECT count(*) FROM kt WHERE tag LIKE 'blue%'", "INSERT INTO kt VALUES ('g5', 'grey-5', 0)"},
			[]string{"SELECT count(*) FROM kt WHERE tag LIKE 'gold%'", "INSERT INTO kt VALUES ('b5', 'blue-5', 0)"}, false, 0},
	)
	if strings.HasSuffix(t.Name(), "/postgres") {
		for _, ddl := range []string{
			"CREATE FUNCTION kg_total() RETURNS bigint LANGUAGE plpgsql AS $$ BEGIN RETURN (SELECT sum(value) FROM kg); END $$",
			"CREATE FUNCTION kg_total_sql() RETURNS bigint LANGUAGE sql AS $$ SELECT sum(value) FROM kg $$",
			"CREATE VIEW kg_view AS SELECT * FROM kg",
			"CREATE TABLE kg_log (id integer PRIMARY KEY, total bigint)",
			"CREATE FUNCTION kg_log_total() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN NEW.total := (SELECT sum(value) FROM kg); RETURN NEW; END $$",
			"CREATE TRIGGER kg_log_total BEFORE INSERT ON kg_log FOR EACH ROW EXECUTE FUNCTION kg_log_total()",
			"CREATE TABLE kg_r (id integer PRIMARY KEY)",
			"CREATE TABLE kg_audit (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY, n bigint)",
			"CREATE RULE kg_r_audit AS ON INSERT TO kg_r DO ALSO INSERT INTO kg_audit (n) SELECT count(*) FROM kg",
		} {
			mustExec(t, c.Conn(0), ddl)
		}
		// Each reads key 2 of kg, which T1 leaves alone, and kg whole
		// by code no statement names: T1's write of key 1 fails it.
		t1 := []string{"SELECT value FROM kg WHERE id = 1", "UPDATE kg SET value = value + 1 WHERE id = 1"}
		cases = append(cases,
			keyGrainCase{"plpgsql function", t1, []string{"SELECT value FROM kg WHERE id = 2 AND kg_total() > 0", "UPDATE kg SET value = value + 1 WHERE id = 2"}, true, 0},
			keyGrainCase{"sql function", t1, []string{"SELECT value FROM kg WHERE id = 2 AND kg_total_sql() > 0", "UPDATE kg SET value = value + 1 WHERE id = 2"}, true, 0},
			keyGrainCase{"view", t1, []string{"SELECT value FROM kg_view WHERE id = 2", "UPDATE kg SET value = value + 1 WHERE id = 2"}, true, 0},
			keyGrainCase{"trigger", t1, []string{"SELECT value FROM kg WHERE id = 2", "INSERT INTO kg_log (id) VALUES (1)"}, true, 0},
			keyGrainCase{"rule", t1, []string{"SELECT value FROM kg WHERE id = 2", "INSERT INTO kg_r VALUES (1)"}, true, 0},
			keyGrainCase{"key reads alone", t1, []string{"SELECT value FROM kg WHERE id = 2", "UPDATE kg SET value = value + 1 WHERE id = 2"}, false, 0},
		)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// T2 binds its parameters as pgx does (extended protocol,
			// binary integers), T1 sends text.
			a := syncConn(t, c, 0)
			b, err := pgclient.ConnectExtended(ctxT(t), "postgres://certa@"+c.Nodes[1].PGAddr+"/certa?sslmode=disable")
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			mustExec(t, b, "SET certa.consistency = 'sync'")
			mustExec(t, a, "BEGIN ISOLATION LEVEL SERIALIZABLE")
			mustExec(t, b, "BEGIN ISOLATION LEVEL SERIALIZABLE")
			for i := range tc.t1 {
				for _, step := range []struct {
					conn *pgclient.Conn
					sql  string
				}{{a, tc.t1[i]}, {b, tc.t2[i]}} {
					var err error
					if strings.Contains(step.sql, "$1") {
						_, err = step.conn.Query(ctxT(t), step.sql, tc.arg)
					} else {
						_, err = step.conn.Exec(ctxT(t), step.sql)
					}
					if err != nil {
						t.Fatalf("%s: %v", step.sql, err)
					}
				}
			}
			if _, err := a.Exec(ctxT(t), "COMMIT"); err != nil {
				t.Fatalf("T1 COMMIT: %v", err)
			}
			_, err = b.Exec(ctxT(t), "COMMIT")
			if got := pgclient.SQLState(err); (got == "40001") != tc.t2Failed || err != nil && got != "40001" {
				t.Fatalf("T2 COMMIT: %v, want failed = %v", fmt.Sprint(pgclient.ErrorFields(err)), tc.t2Failed)
			}
		})
	}
	c.WaitConverged(20 * time.Second)
}

// intList is "from, from+1, ..., to-1".
func intList(from, to int) string {
	var b strings.Builder
	for i := from; i < to; i++ {
		if i > from {
			b.WriteString(", ")
		}
		fmt.Fprint(&b, i)
	}
	return b.String()
}
