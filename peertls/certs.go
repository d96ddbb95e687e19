package peertls

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// File names of what MakeCA and MakeNodeCert write.
const (
	CACertFile = "ca.crt"
	CAKeyFile  = "ca.key"
)

// NodeFiles are the file names MakeNodeCert writes for node id in dir.
func NodeFiles(dir, id string) Files {
	return Files{Cert: filepath.Join(dir, id+".crt"), Key: filepath.Join(dir, id+".key"), CA: filepath.Join(dir, CACertFile)}
}

// MakeCA writes a new cluster CA into dir (ca.crt, and ca.key readable by
// its owner only), valid for validFor. It refuses to overwrite a CA: the
// certificates it signed would no longer be accepted.
func MakeCA(dir string, validFor time.Duration) error {
	if _, err := os.Stat(filepath.Join(dir, CAKeyFile)); err == nil {
		return fmt.Errorf("%s already holds a CA (%s): keep it, or move it away to make a new one", dir, CAKeyFile)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl, err := template("certa cluster CA", validFor)
	if err != nil {
		return err
	}
	tmpl.IsCA = true
	tmpl.BasicConstraintsValid = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	return writePair(dir, CACertFile, CAKeyFile, der, key)
}

// MakeNodeCert writes a certificate for node id, signed by the CA in dir,
// into dir (id.crt, id.key), valid for validFor, for the hosts (IP
// addresses or DNS names) that the node's Raft and HTTP addresses use:
// peers check the host they dial against them.
func MakeNodeCert(dir, id string, hosts []string, validFor time.Duration) error {
	if id == "" || len(hosts) == 0 {
		return errors.New("a node certificate needs the node's id and at least one host")
	}
	caCert, caKey, err := loadCA(dir)
	if err != nil {
		return err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl, err := template(id, validFor)
	if err != nil {
		return err
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return err
	}
	f := NodeFiles(dir, id)
	return writePair(dir, filepath.Base(f.Cert), filepath.Base(f.Key), der, key)
}

func template(cn string, validFor time.Duration) (*x509.Certificate, error) {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn, Organization: []string{"certa"}},
		NotBefore:    now.Add(-time.Hour), // tolerate clocks a little behind
		NotAfter:     now.Add(validFor),
	}, nil
}

func loadCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, CACertFile))
	if err != nil {
		return nil, nil, fmt.Errorf("CA certificate: %w (make one with certa cert ca)", err)
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, CAKeyFile))
	if err != nil {
		return nil, nil, fmt.Errorf("CA key: %w", err)
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("%s: not a PEM CA certificate and key", dir)
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

// writePair writes a certificate and its key (owner-only) as PEM, never
// over existing files.
func writePair(dir, certName, keyName string, der []byte, key *ecdsa.PrivateKey) error {
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil { // it holds private keys
		return err
	}
	if err := writeNew(filepath.Join(dir, keyName), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		return err
	}
	return writeNew(filepath.Join(dir, certName), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
}

func writeNew(path string, data []byte, mode os.FileMode) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
