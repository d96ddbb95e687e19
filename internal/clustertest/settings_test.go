package clustertest

import (
	"testing"

	"certa/internal/testcluster"
)

// SET of the parameters PostgreSQL reports is reported back
// (ParameterStatus) and shown by SHOW; what certa cannot honour is refused.
func TestSettingsReported(t *testing.T) {
	c := testcluster.Start(t, 1, testArgs...)
	a := c.Conn(0)
	mustExec(t, a, "SET application_name = 'billing'")
	if got := a.ParameterStatus("application_name"); got != "billing" {
		t.Errorf("application_name reported as %q", got)
	}
	if got := values(t, a, "SELECT 1, current_database() || ' ' || current_schema()"); got != "1=certa public" {
		t.Errorf("got %q", got)
	}
	// The embedded engine keeps timestamps in UTC and writes ISO dates:
	// another zone or output style would be taken and ignored.
	mustFail(t, a, "0A000", "SET TimeZone = 'Europe/Berlin'")
	mustExec(t, a, "SET TimeZone = 'Etc/UTC'")
	if got := a.ParameterStatus("TimeZone"); got != "Etc/UTC" {
		t.Errorf("TimeZone reported as %q", got)
	}
	mustFail(t, a, "0A000", "SET DateStyle = 'German'")
	mustExec(t, a, "SET DateStyle = 'ISO, DMY'")
	if got := a.ParameterStatus("DateStyle"); got != "ISO, MDY" {
		t.Errorf("DateStyle reported as %q, want what certa sends: ISO, MDY", got)
	}
	mustFail(t, a, "22023", "SET client_encoding = 'LATIN1'")
	if got, err := a.QueryString(ctxT(t), "SHOW application_name"); err != nil || got != "billing" {
		t.Errorf("SHOW application_name: %q, %v", got, err)
	}
}
