// Package peertls secures the traffic between a cluster's nodes with mutual
// TLS: every node holds a certificate signed by the cluster's CA, whose
// common name is the node's id, and accepts and dials only peers that
// present one (as etcd's peer TLS does). It loads those files into the
// tls.Configs the Raft transport and the HTTP API use, and makes a CA and
// node certificates for people who have none (certs.go). It imports only
// the standard library.
package peertls

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net/http"
	"os"
)

// Files names a node's peer TLS files, all PEM.
type Files struct {
	Cert string // the node's certificate, signed by the cluster's CA
	Key  string // its private key
	CA   string // the cluster CA's certificate
}

// Config is a node's peer TLS: its certificate and the CA that signs its
// peers'.
type Config struct {
	cert tls.Certificate
	pool *x509.CertPool
	// ID is the node id the certificate names (its common name).
	ID string
}

// ErrNoPeerCert: a request that only a peer may make came without a
// certificate of the cluster's CA.
var ErrNoPeerCert = errors.New("peertls: no certificate of the cluster's CA")

// Load reads and checks f: the certificate must be signed by the CA and
// usable by a server and a client alike.
func Load(f Files) (*Config, error) {
	if f.Cert == "" || f.Key == "" || f.CA == "" {
		return nil, errors.New("peer TLS needs a certificate, its key and the cluster's CA certificate (--peer-cert, --peer-key, --peer-ca)")
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, fmt.Errorf("peer certificate: %w", err)
	}
	caPEM, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, fmt.Errorf("peer CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, fmt.Errorf("peer CA %s holds no PEM certificate", f.CA)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		return nil, fmt.Errorf("peer certificate: %w", err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}); err != nil {
		return nil, fmt.Errorf("peer certificate %s is not one of the CA %s for servers and clients: %w", f.Cert, f.CA, err)
	}
	if leaf.Subject.CommonName == "" {
		return nil, fmt.Errorf("peer certificate %s names no node (empty common name)", f.Cert)
	}
	return &Config{cert: cert, pool: pool, ID: leaf.Subject.CommonName}, nil
}

// Server is the TLS of a listener that only peers may connect to (the
// Raft port).
func (c *Config) Server() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{c.cert},
		ClientCAs:    c.pool,
		ClientAuth:   tls.RequireAndVerifyClientCert,
		MinVersion:   tls.VersionTLS13,
	}
}

// ServerPeerOptional is the TLS of a listener that serves peers and
// others (the HTTP port: its /status and /metrics are for operators).
// A client certificate, when given, must be of the cluster's CA;
// RequirePeer tells the requests that came with one.
func (c *Config) ServerPeerOptional() *tls.Config {
	s := c.Server()
	s.ClientAuth = tls.VerifyClientCertIfGiven
	return s
}

// Client is the TLS with which a node dials its peers: it presents its
// certificate and accepts only servers with one of the cluster's CA for
// the host it dials (the server name is the dialled host).
func (c *Config) Client() *tls.Config {
	return &tls.Config{
		Certificates: []tls.Certificate{c.cert},
		RootCAs:      c.pool,
		MinVersion:   tls.VersionTLS13,
	}
}

// PeerID returns the node id of the verified peer certificate a TLS
// connection presented; ok is false without one.
func PeerID(cs *tls.ConnectionState) (id string, ok bool) {
	if cs == nil || len(cs.VerifiedChains) == 0 || len(cs.VerifiedChains[0]) == 0 {
		return "", false
	}
	return cs.VerifiedChains[0][0].Subject.CommonName, true
}

// RequirePeer returns h behind a check that the request came over TLS
// with a verified certificate of the cluster's CA (403 otherwise). With a
// nil Config (peers not secured: --insecure-peers, or loopback only) h is
// returned as it is.
func (c *Config) RequirePeer(h http.Handler) http.Handler {
	if c == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := PeerID(r.TLS); !ok {
			http.Error(w, "this endpoint is for the cluster's nodes: present a certificate of the cluster's CA", http.StatusForbidden)
			return
		}
		h.ServeHTTP(w, r)
	})
}
