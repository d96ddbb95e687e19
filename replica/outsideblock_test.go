package replica

import "testing"

// What PostgreSQL refuses inside a transaction block is refused there
// with 25001 over the embedded engine too, and runs outside one.
func TestOutsideBlockOnly(t *testing.T) {
	s, _ := newTestSession()
	runSteps(t, s, []sessionStep{
		{"BEGIN", "BEGIN", 'T'},
		{"CREATE INDEX CONCURRENTLY t_v ON t (v)", "!25001", 'E'},
		{"ROLLBACK", "ROLLBACK", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"VACUUM t", "!25001", 'E'},
		{"ROLLBACK", "ROLLBACK", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"drop index concurrently t_v", "!25001", 'E'},
		{"ROLLBACK", "ROLLBACK", 'I'},
		{"BEGIN", "BEGIN", 'T'},
		{"INSERT INTO t VALUES ('CONCURRENTLY')", "INSERT 0 1", 'T'},
		{"COMMIT", "COMMIT", 'I'},
	})
}
