package pgwire

import (
	"bytes"
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"testing"
)

// scramOracle derives a credential the long way, straight from RFC 5802,
// to check the library's derivation against.
func scramOracle(t *testing.T, password string, salt []byte, iter int) SCRAMCredential {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iter, sha256.Size)
	if err != nil {
		t.Fatal(err)
	}
	h := func(key []byte, msg string) []byte {
		m := hmac.New(sha256.New, key)
		m.Write([]byte(msg))
		return m.Sum(nil)
	}
	stored := sha256.Sum256(h(salted, "Client Key"))
	return SCRAMCredential{Salt: salt, Iterations: iter, StoredKey: stored[:], ServerKey: h(salted, "Server Key")}
}

func TestNewSCRAMCredential(t *testing.T) {
	c, err := NewSCRAMCredential("pencil")
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Salt) != 16 || c.Iterations != 4096 {
		t.Fatalf("salt %d bytes, %d iterations; want PostgreSQL's 16 and 4096", len(c.Salt), c.Iterations)
	}
	if want := scramOracle(t, "pencil", c.Salt, 4096); c.String() != want.String() {
		t.Fatalf("got %s\nwant %s", c, want)
	}
	c2, _ := NewSCRAMCredential("pencil")
	if bytes.Equal(c.Salt, c2.Salt) {
		t.Fatal("two credentials share a salt")
	}

	// SASLprep maps a non-ASCII space to a space, as libpq does; a
	// password SASLprep refuses (a control character) is used raw.
	salt := []byte("0123456789abcdef")
	for _, tc := range []struct{ password, prepped string }{
		{"a\u00a0b", "a b"},
		{"a\u0007b", "a\u0007b"},
	} {
		got, err := scramCredential(tc.password, salt, 4096)
		if err != nil {
			t.Fatal(err)
		}
		if want := scramOracle(t, tc.prepped, salt, 4096); got.String() != want.String() {
			t.Errorf("password %q: got %s, want the credential of %q", tc.password, got, tc.prepped)
		}
	}
}

func TestParseSCRAMVerifier(t *testing.T) {
	// The RFC 7677 example's salt and iteration count.
	salt, _ := base64.StdEncoding.DecodeString("W22ZaJ0SNY7soEsUEjb6gQ==")
	want := scramOracle(t, "pencil", salt, 4096)
	text := want.String()
	if !strings.HasPrefix(text, "SCRAM-SHA-256$4096:W22ZaJ0SNY7soEsUEjb6gQ==$") {
		t.Fatalf("format: %s", text)
	}
	got, err := ParseSCRAMVerifier(text)
	if err != nil || got.String() != text {
		t.Fatalf("round trip: %s, %v", got, err)
	}

	key := base64.StdEncoding.EncodeToString(make([]byte, 32))
	for _, bad := range []string{
		"",
		"md5a3556571e93b0d20722ba62be61e8c2d",
		"pencil",
		"SCRAM-SHA-256$4096:c2FsdA==$" + key,
		"SCRAM-SHA-256$x:c2FsdA==$" + key + ":" + key,
		"SCRAM-SHA-256$0:c2FsdA==$" + key + ":" + key,
		"SCRAM-SHA-256$99999999999:c2FsdA==$" + key + ":" + key,
		"SCRAM-SHA-256$4096:$" + key + ":" + key,
		"SCRAM-SHA-256$4096:!!!$" + key + ":" + key,
		"SCRAM-SHA-256$4096:c2FsdA==$c2FsdA==:" + key,
		"SCRAM-SHA-256$4096:c2FsdA==$" + key + ":" + key + "x",
	} {
		if c, err := ParseSCRAMVerifier(bad); err == nil {
			t.Errorf("%q parsed as %s", bad, c)
		}
	}
}

func TestReadUsers(t *testing.T) {
	alice, _ := NewSCRAMCredential("a")
	bob, _ := NewSCRAMCredential("b")
	file := "# users\n\nalice:" + alice.String() + "\n  bob:x:" + bob.String() + "  \n"
	users, err := ReadUsers(strings.NewReader(file))
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 {
		t.Fatalf("got %d users", len(users))
	}
	if c, ok := users.Lookup("alice"); !ok || c.String() != alice.String() {
		t.Errorf("alice: %s %v", c, ok)
	}
	// A name may hold colons: it ends before "SCRAM-SHA-256$".
	if c, ok := users.Lookup("bob:x"); !ok || c.String() != bob.String() {
		t.Errorf("bob:x: %s %v", c, ok)
	}
	if _, ok := users.Lookup("carol"); ok {
		t.Error("carol found")
	}

	for _, tc := range []struct{ file, want string }{
		{"alice:secret\n", "line 1: want name:SCRAM-SHA-256$"},
		{"#\nalice:md5a3556571e93b0d20722ba62be61e8c2d\n", "line 2: want name:"},
		{":" + alice.String(), "line 1: want name:"},
		{"alice:" + alice.String() + "\nalice:" + bob.String(), `line 2: user "alice" appears twice`},
		{"alice:SCRAM-SHA-256$4096:c2FsdA==$x:y", `line 1: user "alice": SCRAM-SHA-256 verifier: StoredKey`},
	} {
		_, err := ReadUsers(strings.NewReader(tc.file))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %q", tc.file, err, tc.want)
		}
	}
}

// FuzzReadUsers checks that no users file crashes the reader and that every
// credential it accepts prints back as it was read.
func FuzzReadUsers(f *testing.F) {
	c, _ := NewSCRAMCredential("x")
	f.Add("u:" + c.String() + "\n# c\n")
	f.Add("u:SCRAM-SHA-256$1:AA==$" + strings.Repeat("A", 43) + "=:" + strings.Repeat("A", 43) + "=")
	f.Add("u:SCRAM-SHA-256$:$:")
	f.Fuzz(func(t *testing.T, file string) {
		users, err := ReadUsers(strings.NewReader(file))
		if err != nil {
			return
		}
		for name, c := range users {
			again, err := ParseSCRAMVerifier(c.String())
			if err != nil || again.String() != c.String() || name == "" {
				t.Fatalf("user %q: %s does not read back: %v", name, c, err)
			}
		}
	})
}
