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
	mustExec(t, a, "SET TimeZone = 'Europe/Berlin'")
	if got := a.ParameterStatus("TimeZone"); got != "Europe/Berlin" {
		t.Errorf("TimeZone reported as %q", got)
	}
	mustExec(t, a, "SET DateStyle = 'German'")
	if got := a.ParameterStatus("DateStyle"); got != "ISO, MDY" {
		t.Errorf("DateStyle reported as %q, want what certa sends: ISO, MDY", got)
	}
	mustFail(t, a, "22023", "SET client_encoding = 'LATIN1'")
	if got, err := a.QueryString(ctxT(t), "SHOW application_name"); err != nil || got != "billing" {
		t.Errorf("SHOW application_name: %q, %v", got, err)
	}
}
