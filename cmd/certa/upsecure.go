package main

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"certa/peertls"
	"certa/pgwire"
)

// upSecurity is what `certa up --secure` gives its nodes: peer TLS, client
// TLS with the same certificates, and a users file with one user.
type upSecurity struct {
	certDir  string
	user     string
	password string
	users    string // the users file
	status   *tls.Config
}

// secureUp makes (or reuses) in dataDir a CA, a certificate per node for
// 127.0.0.1 and localhost, and a users file with the user certa and a
// random password, kept in dataDir/password (owner-only) so that later
// runs print it again.
func secureUp(dataDir string, nodes int) (*upSecurity, error) {
	s := &upSecurity{certDir: filepath.Join(dataDir, "certs"), user: "certa", users: filepath.Join(dataDir, "users")}
	if err := os.MkdirAll(s.certDir, 0o700); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(s.certDir, peertls.CACertFile)); errors.Is(err, os.ErrNotExist) {
		if err := peertls.MakeCA(s.certDir, 3650*24*time.Hour); err != nil {
			return nil, err
		}
	}
	for k := 1; k <= nodes; k++ {
		id := fmt.Sprintf("node%d", k)
		if _, err := os.Stat(peertls.NodeFiles(s.certDir, id).Cert); errors.Is(err, os.ErrNotExist) {
			if err := peertls.MakeNodeCert(s.certDir, id, []string{"127.0.0.1", "localhost"}, 825*24*time.Hour); err != nil {
				return nil, err
			}
		}
	}
	pwFile := filepath.Join(dataDir, "password")
	if b, err := os.ReadFile(pwFile); err == nil {
		s.password = strings.TrimSpace(string(b))
	} else {
		var r [12]byte
		rand.Read(r[:])
		s.password = hex.EncodeToString(r[:])
		if err := os.WriteFile(pwFile, []byte(s.password+"\n"), 0o600); err != nil {
			return nil, err
		}
	}
	cred, err := pgwire.NewSCRAMCredential(s.password)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(s.users, []byte(s.user+":"+cred.String()+"\n"), 0o600); err != nil {
		return nil, err
	}
	peer, err := peertls.Load(peertls.NodeFiles(s.certDir, "node1"))
	if err != nil {
		return nil, err
	}
	s.status = peer.Client()
	return s, nil
}

// nodeArgs are the security flags of node id.
func (s *upSecurity) nodeArgs(id string) []string {
	f := peertls.NodeFiles(s.certDir, id)
	return []string{"--peer-cert", f.Cert, "--peer-key", f.Key, "--peer-ca", f.CA,
		"--tls-cert", f.Cert, "--tls-key", f.Key, "--require-tls", "--users-file", s.users}
}

// connString is how psql reaches a node of the secure cluster.
func (s *upSecurity) connString(port int) string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=%s password=%s dbname=certa sslmode=verify-full sslrootcert=%s",
		port, s.user, s.password, filepath.Join(s.certDir, peertls.CACertFile))
}
