package sqlite

import (
	"testing"

	"certa/engine"
	"certa/result"
)

// pg_try_advisory_xact_lock: a key one transaction holds is refused to
// another until the first ends; the holder may take it again; two
// integers are a key space of their own.
func TestAdvisoryXactLock(t *testing.T) {
	e := openTest(t, Config{})
	a, b := e.begin(), e.begin()
	defer b.Rollback()
	lock := func(tx engine.Tx, key string) []result.Value {
		t.Helper()
		return exec(t, tx, "SELECT pg_try_advisory_xact_lock("+key+")").rows[0]
	}
	wantRows(t, [][]result.Value{lock(a, "42")}, row(true))
	wantRows(t, [][]result.Value{lock(a, "42")}, row(true))
	wantRows(t, [][]result.Value{lock(b, "42")}, row(false))
	wantRows(t, [][]result.Value{lock(b, "0, 42")}, row(true))
	a.Rollback()
	wantRows(t, [][]result.Value{lock(b, "42")}, row(true))
	if code, _ := execErr(b, "SELECT pg_try_advisory_xact_lock('x')"); code != "42883" {
		t.Errorf("text key: %s", code)
	}
}
