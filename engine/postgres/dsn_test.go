package postgres

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The secret is made once, readable by its owner only, and read back the
// same; a secret others may read is refused.
func TestLoadSecret(t *testing.T) {
	path := filepath.Join(t.TempDir(), "postgres-dsn.secret")
	s1, err := loadSecret(path)
	if err != nil || len(s1) < 20 {
		t.Fatalf("made %q, %v", s1, err)
	}
	if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", st.Mode(), err)
	}
	if s2, err := loadSecret(path); err != nil || s2 != s1 {
		t.Fatalf("read back %q, %v; made %q", s2, err, s1)
	}
	if claimOf(s1) == claimOf(s1+"x") || len(claimOf(s1)) != 32 {
		t.Fatal("claims of different secrets alike")
	}
	os.Chmod(path, 0o644)
	if _, err := loadSecret(path); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a secret readable by others: %v", err)
	}
}

// Login roles fit PostgreSQL's 63 bytes and differ between databases.
func TestClientLogin(t *testing.T) {
	long1, long2 := strings.Repeat("a", 50)+"1", strings.Repeat("a", 50)+"2"
	if got := loginFor(clientRole, "certa_n1"); got != "certa_client_certa_n1" {
		t.Fatal(got)
	}
	l1, l2 := loginFor(clientRole, long1), loginFor(clientRole, long2)
	if l1 == l2 || len(l1) > 63 || len(l2) > 63 {
		t.Fatalf("%q %q", l1, l2)
	}
}

// A SCRAM verifier has PostgreSQL's form, with a fresh salt each time.
func TestSCRAMVerifier(t *testing.T) {
	v1, err := scramVerifier("pw")
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := scramVerifier("pw")
	if !strings.HasPrefix(v1, "SCRAM-SHA-256$4096:") || strings.Count(v1, "$") != 2 || strings.Count(v1, ":") != 2 || v1 == v2 {
		t.Fatalf("%q %q", v1, v2)
	}
}
