package pgparse

import "testing"

func TestSessionState(t *testing.T) {
	for _, c := range []struct{ sql, want string }{
		{"SELECT v FROM t WHERE id = $1", StateNone},
		{"SELECT pg_catalog.set_config('search_path', '', false)", StateSetting},
		{"SELECT set_config('app.user', $1, $2)", StateSetting},
		{"SELECT set_config('app.user', '42', true)", StateNone},
		{"SELECT x FROM t WHERE set_config('a', 'b', true) IS NOT NULL", StateNone},
		{"SELECT pg_advisory_lock(42)", StateAdvisoryLock},
		{"SELECT pg_try_advisory_lock_shared(1, 2)", StateAdvisoryLock},
		{"SELECT pg_advisory_xact_lock(42)", StateNone},
		{"SELECT pg_advisory_unlock(42)", StateNone},
		{"SELECT CASE WHEN $1 THEN pg_try_advisory_lock(7) END", StateAdvisoryLock},
		{"PREPARE p (int) AS SELECT $1", StatePrepared},
		{"DECLARE c CURSOR WITH HOLD FOR SELECT 1", StateHoldCursor},
		{"DECLARE c CURSOR WITHOUT HOLD FOR SELECT 1", StateNone},
		{"LISTEN events", StateListen},
		{"SELECT holder, listener, prepared_at FROM t", StateNone},
		{"SELECT 'pg_advisory_lock(1)'", StateNone},
		{"SELECT pg_advisory_lock(", StateNone}, // PostgreSQL refuses it
	} {
		if got := SessionState(c.sql); got != c.want {
			t.Errorf("%s: %q, want %q", c.sql, got, c.want)
		}
	}
}
