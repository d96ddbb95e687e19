package replica

import (
	"context"
	"slices"
	"testing"

	"certa/result"
)

// Which transactions are read-only, as PostgreSQL decides it: BEGIN's
// mode, else default_transaction_read_only (however set); SET TRANSACTION
// READ ONLY at any point, READ WRITE only before the first query and not
// in a savepoint. The engine's transaction is made read-only before its
// first statement; schema statements are refused with 25006.
func TestReadOnlyTransactions(t *testing.T) {
	s, e := newTestSession()
	runSteps(t, s, []sessionStep{
		{"BEGIN READ ONLY", "BEGIN", 'T'},
		{"SHOW transaction_read_only", "SHOW", 'T'},
		{"INSERT INTO t VALUES (1)", "INSERT 0 1", 'T'},
		{"CREATE TABLE u (id int)", "!25006", 'E'},
		{"ROLLBACK", "ROLLBACK", 'I'},
		{"START TRANSACTION READ ONLY", "BEGIN", 'T'},
		{"SET TRANSACTION READ WRITE", "SET", 'T'},
		{"INSERT INTO t VALUES (2)", "INSERT 0 1", 'T'},
		{"SET TRANSACTION READ ONLY", "SET", 'T'},
		{"SET TRANSACTION READ WRITE", "!25001", 'E'},
		{"ROLLBACK", "ROLLBACK", 'I'},
		{"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY", "SET", 'I'},
		{"INSERT INTO t VALUES (3)", "INSERT 0 1", 'I'},
		{"TRUNCATE t", "!25006", 'I'},
		{"BEGIN READ WRITE", "BEGIN", 'T'},
		{"INSERT INTO t VALUES (4)", "INSERT 0 1", 'T'},
		{"COMMIT", "COMMIT", 'I'},
		{"SET default_transaction_read_only = maybe", "!22023", 'I'},
		{"SET default_transaction_read_only = off", "SET", 'I'},
		{"INSERT INTO t VALUES (5)", "INSERT 0 1", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"SAVEPOINT a", "SAVEPOINT", 'T'},
		{"SET transaction_read_only = on", "SET", 'T'},
		{"SET transaction_read_only = off", "!25001", 'E'},
		{"ROLLBACK", "ROLLBACK", 'I'},
		{"SET TRANSACTION READ ONLY", "SET", 'I'},
		{"INSERT INTO t VALUES (6)", "INSERT 0 1", 'I'},
	})
	// What each transaction that committed ran (the fake engine records
	// SetReadOnly as "read only"; its writes do not fail).
	got := e.committed
	wantCommitted := [][]string{
		{"read only", "INSERT INTO t VALUES (3)"},
		{"INSERT INTO t VALUES (4)"},
		{"INSERT INTO t VALUES (5)"},
		{"INSERT INTO t VALUES (6)"},
	}
	if !slices.EqualFunc(got, wantCommitted, slices.Equal) {
		t.Fatalf("committed %q, want %q", got, wantCommitted)
	}
}

// SHOW says the mode in force: the block's, else the default.
func TestShowReadOnly(t *testing.T) {
	s, _ := newTestSession()
	show := func(name string) string {
		t.Helper()
		buf := &result.Buffer{}
		if err := s.Query(context.Background(), "SHOW "+name, buf); err != nil || len(buf.Rows) != 1 {
			t.Fatalf("SHOW %s: %v %v", name, buf.Rows, err)
		}
		return buf.Rows[0][0].(string)
	}
	for _, c := range []struct{ sql, tx, def string }{
		{"", "off", "off"},
		{"BEGIN READ ONLY", "on", "off"},
		{"SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY", "on", "on"},
		{"COMMIT", "on", "on"},
		{"BEGIN READ WRITE", "off", "on"},
		{"ROLLBACK", "on", "on"},
		{"RESET default_transaction_read_only", "off", "off"},
	} {
		if c.sql != "" {
			if tag, _ := step(s, c.sql); tag[0] == '!' {
				t.Fatalf("%s: %s", c.sql, tag)
			}
		}
		if tx, def := show("transaction_read_only"), show("default_transaction_read_only"); tx != c.tx || def != c.def {
			t.Errorf("after %q: transaction_read_only %s, default %s; want %s, %s", c.sql, tx, def, c.tx, c.def)
		}
	}
}

// default_transaction_read_only is reported to the client when it
// changes (PostgreSQL 14 and later report it: libpq's
// target_session_attrs reads it), also when a block's change is undone.
func TestDefaultReadOnlyIsReported(t *testing.T) {
	s, _ := newTestSession()
	s.TakeReported()
	for _, c := range []struct {
		sql  string
		want [][2]string
	}{
		{"SET default_transaction_read_only = on", [][2]string{{"default_transaction_read_only", "on"}}},
		{"BEGIN", nil},
		{"SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE", [][2]string{{"default_transaction_read_only", "off"}}},
		{"ROLLBACK", [][2]string{{"default_transaction_read_only", "on"}}},
	} {
		if tag, _ := step(s, c.sql); tag[0] == '!' {
			t.Fatalf("%s: %s", c.sql, tag)
		}
		if got := s.TakeReported(); !slices.Equal(got, c.want) {
			t.Errorf("after %s: reported %q, want %q", c.sql, got, c.want)
		}
	}
}
