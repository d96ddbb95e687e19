package pgwire

import (
	"bufio"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/xdg-go/scram"
	"github.com/xdg-go/stringprep"
)

// DefaultSCRAMIterations is the PBKDF2 iteration count NewSCRAMCredential
// uses: PostgreSQL's default (scram_iterations).
const DefaultSCRAMIterations = 4096

// scramSaltLen is PostgreSQL's SCRAM_DEFAULT_SALT_LEN.
const scramSaltLen = 16

// scramPrefix starts a SCRAM-SHA-256 verifier in PostgreSQL's format.
const scramPrefix = "SCRAM-SHA-256$"

// maxSCRAMIterations bounds the iteration count a verifier may name. Each
// login costs the client (not the server) this many HMACs; a typo of a
// few zeros should be an error, not a client that seems to hang.
const maxSCRAMIterations = 10_000_000

// SCRAMCredential is what the server stores to authenticate a user with
// SCRAM-SHA-256 (RFC 7677): enough to check a client's proof, not enough to
// log in as the user, and the same as PostgreSQL's pg_authid.rolpassword.
type SCRAMCredential struct {
	Salt       []byte
	Iterations int
	StoredKey  []byte // H(HMAC(SaltedPassword, "Client Key")), 32 bytes
	ServerKey  []byte // HMAC(SaltedPassword, "Server Key"), 32 bytes
}

// NewSCRAMCredential derives the credential for password with a random
// salt and DefaultSCRAMIterations, as PostgreSQL does for
// password_encryption = scram-sha-256.
func NewSCRAMCredential(password string) (SCRAMCredential, error) {
	salt := make([]byte, scramSaltLen)
	rand.Read(salt) // never fails (crypto/rand panics instead)
	return scramCredential(password, salt, DefaultSCRAMIterations)
}

func scramCredential(password string, salt []byte, iterations int) (SCRAMCredential, error) {
	// libpq and PostgreSQL normalise the password with SASLprep and fall
	// back to the raw bytes when it is not valid UTF-8 or SASLprep refuses
	// it; doing the same lets every libpq client log in.
	if p, err := stringprep.SASLprep.Prepare(password); err == nil {
		password = p
	}
	client, err := scram.SHA256.NewClientUnprepped("", password, "")
	if err != nil {
		return SCRAMCredential{}, err
	}
	sc, err := client.GetStoredCredentialsWithError(scram.KeyFactors{Salt: string(salt), Iters: iterations})
	if err != nil {
		return SCRAMCredential{}, fmt.Errorf("derive SCRAM credential: %w", err)
	}
	return SCRAMCredential{Salt: salt, Iterations: iterations, StoredKey: sc.StoredKey, ServerKey: sc.ServerKey}, nil
}

// String returns c in PostgreSQL's verifier format:
// SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>, base64.
func (c SCRAMCredential) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("%s%d:%s$%s:%s", scramPrefix, c.Iterations, b64(c.Salt), b64(c.StoredKey), b64(c.ServerKey))
}

// ParseSCRAMVerifier parses a verifier in PostgreSQL's format (see String).
func ParseSCRAMVerifier(s string) (SCRAMCredential, error) {
	rest, ok := strings.CutPrefix(s, scramPrefix)
	if !ok {
		return SCRAMCredential{}, errors.New("not a SCRAM-SHA-256 verifier (want SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>; MD5 and plain passwords are not accepted)")
	}
	factors, keys, ok := strings.Cut(rest, "$")
	iter, salt, ok1 := strings.Cut(factors, ":")
	stored, server, ok2 := strings.Cut(keys, ":")
	if !ok || !ok1 || !ok2 {
		return SCRAMCredential{}, errors.New("malformed SCRAM-SHA-256 verifier: want SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>")
	}
	var c SCRAMCredential
	var err error
	if c.Iterations, err = strconv.Atoi(iter); err != nil || c.Iterations < 1 || c.Iterations > maxSCRAMIterations {
		return SCRAMCredential{}, fmt.Errorf("SCRAM-SHA-256 verifier: iteration count %q is not a number in [1, %d]", iter, maxSCRAMIterations)
	}
	for _, f := range []struct {
		name, b64 string
		dst       *[]byte
		size      int // 0: any non-zero length
	}{
		{"salt", salt, &c.Salt, 0},
		{"StoredKey", stored, &c.StoredKey, 32},
		{"ServerKey", server, &c.ServerKey, 32},
	} {
		b, err := base64.StdEncoding.Strict().DecodeString(f.b64)
		if err != nil || len(b) == 0 || f.size != 0 && len(b) != f.size {
			return SCRAMCredential{}, fmt.Errorf("SCRAM-SHA-256 verifier: %s is not valid base64 of the right length", f.name)
		}
		*f.dst = b
	}
	return c, nil
}

// Users is a set of users and their SCRAM credentials, as read from a users
// file. It is not modified after ReadUsers, so Lookup may be called
// concurrently.
type Users map[string]SCRAMCredential

// Lookup returns user's credential; it fits Config.Credentials.
func (u Users) Lookup(user string) (SCRAMCredential, bool) {
	c, ok := u[user]
	return c, ok
}

// ReadUsers reads a users file: one user a line, as "name:verifier" with a
// verifier in PostgreSQL's format (see SCRAMCredential.String), so that
// lines can be made by `certa passwd` or copied from pg_authid (rolname ||
// ':' || rolpassword). Blank lines and lines starting with '#' are ignored.
// The name ends at the ':' before "SCRAM-SHA-256$", so it may hold colons.
func ReadUsers(r io.Reader) (Users, error) {
	users := Users{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndex(line, ":"+scramPrefix)
		if i <= 0 {
			return nil, fmt.Errorf("line %d: want name:SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey> (MD5 and plain passwords are not accepted)", n)
		}
		name := line[:i]
		if _, dup := users[name]; dup {
			return nil, fmt.Errorf("line %d: user %q appears twice", n, name)
		}
		c, err := ParseSCRAMVerifier(line[i+1:])
		if err != nil {
			return nil, fmt.Errorf("line %d: user %q: %w", n, name, err)
		}
		users[name] = c
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read users: %w", err)
	}
	return users, nil
}
