package pgparse

import "testing"

func TestTransactionModes(t *testing.T) {
	yes, no := true, false
	for _, c := range []struct {
		sql      string
		ok       bool
		of, iso  string
		readOnly *bool
	}{
		{"BEGIN", true, "begin", "", nil},
		{"begin read only", true, "begin", "", &yes},
		{"START TRANSACTION ISOLATION LEVEL SERIALIZABLE, READ WRITE", true, "begin", "serializable", &no},
		{"BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY DEFERRABLE", true, "begin", "repeatable read", &yes},
		{"SET TRANSACTION READ ONLY", true, "transaction", "", &yes},
		{"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL READ COMMITTED, READ ONLY", true, "session", "read committed", &yes},
		{"SET TRANSACTION SNAPSHOT '00000003-0000001B-1'", false, "", "", nil},
		{"COMMIT", false, "", "", nil},
		{"SET default_transaction_read_only = on", false, "", "", nil},
	} {
		m, ok := TransactionModes(c.sql)
		same := (m.ReadOnly == nil) == (c.readOnly == nil) && (m.ReadOnly == nil || *m.ReadOnly == *c.readOnly)
		if ok != c.ok || m.Of != c.of || m.Isolation != c.iso || !same {
			t.Errorf("%q: %+v %v, want of %q, isolation %q, read only %v (ok %v)", c.sql, m, ok, c.of, c.iso, c.readOnly, c.ok)
		}
	}
}
