// Package testcert makes a throwaway certificate authority and a server
// certificate signed by it, for tests of TLS with clients that verify the
// server (sslmode=verify-full).
package testcert

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Certs is a CA and a server certificate for localhost and 127.0.0.1.
type Certs struct {
	CAPEM   []byte // the CA certificate, PEM (libpq's sslrootcert)
	CertPEM []byte // the server certificate, PEM
	KeyPEM  []byte // the server's private key, PEM
	Server  tls.Certificate
	ca      *x509.Certificate
	caKey   *ecdsa.PrivateKey
}

// New makes a CA and a server certificate valid for an hour.
func New(t testing.TB) *Certs {
	t.Helper()
	now := time.Now()
	template := func(serial int64, name string) *x509.Certificate {
		return &x509.Certificate{
			SerialNumber: big.NewInt(serial),
			Subject:      pkix.Name{CommonName: name},
			NotBefore:    now.Add(-time.Minute),
			NotAfter:     now.Add(time.Hour),
			KeyUsage:     x509.KeyUsageDigitalSignature,
		}
	}
	caKey := newKey(t)
	ca := template(1, "certa test CA")
	ca.IsCA, ca.BasicConstraintsValid = true, true
	ca.KeyUsage |= x509.KeyUsageCertSign
	caDER, caCert := issue(t, ca, nil, caKey, caKey)

	key := newKey(t)
	server := template(2, "localhost")
	server.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	server.DNSNames = []string{"localhost"}
	server.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}
	der, _ := issue(t, server, caCert, key, caKey)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	c := &Certs{
		ca: caCert, caKey: caKey,
		CAPEM:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}),
	}
	if c.Server, err = tls.X509KeyPair(c.CertPEM, c.KeyPEM); err != nil {
		t.Fatal(err)
	}
	return c
}

// issue signs tmpl for key with parent's key (parent nil: self-signed).
func issue(t testing.TB, tmpl, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey) ([]byte, *x509.Certificate) {
	t.Helper()
	if parent == nil {
		parent = tmpl
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return der, cert
}

func newKey(t testing.TB) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// Files are the paths of the PEM files WriteFiles wrote.
type Files struct{ CA, Cert, Key string }

// WriteFiles writes the CA certificate, the server certificate and its key
// to dir (the key readable by its owner only, as libpq and servers want).
func (c *Certs) WriteFiles(t testing.TB, dir string) Files {
	t.Helper()
	f := Files{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, "server.pem"), Key: filepath.Join(dir, "server.key")}
	for _, w := range []struct {
		path string
		data []byte
	}{{f.CA, c.CAPEM}, {f.Cert, c.CertPEM}, {f.Key, c.KeyPEM}} {
		if err := os.WriteFile(w.path, w.data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

// ServerConfig returns a server configuration with the certificate.
func (c *Certs) ServerConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{c.Server}}
}

// WriteClient writes a client certificate for user (its common name, as
// PostgreSQL's cert authentication reads it), signed by the CA, and its
// key to dir; Files.CA is the CA certificate's path.
func (c *Certs) WriteClient(t testing.TB, dir, user string) Files {
	t.Helper()
	key := newKey(t)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: user},
		NotBefore:    time.Now().Add(-time.Minute),
		NotAfter:     time.Now().Add(time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	der, _ := issue(t, tmpl, c.ca, key, c.caKey)
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	f := Files{CA: filepath.Join(dir, "ca.pem"), Cert: filepath.Join(dir, user+".pem"), Key: filepath.Join(dir, user+".key")}
	for _, w := range []struct {
		path string
		data []byte
	}{{f.CA, c.CAPEM}, {f.Cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})},
		{f.Key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER})}} {
		if err := os.WriteFile(w.path, w.data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return f
}
