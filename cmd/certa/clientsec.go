package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"os"

	"certa/pgwire"
)

// clientSecurity returns the pgwire settings for client authentication
// and TLS that the flags ask for. No flags: trust and no TLS, which is
// what `certa up` runs with.
func clientSecurity(f nodeFlags) (pgwire.Config, error) {
	var cfg pgwire.Config
	if f.usersFile != "" {
		file, err := os.Open(f.usersFile)
		if err != nil {
			return cfg, fmt.Errorf("users file: %w", err)
		}
		users, err := pgwire.ReadUsers(file)
		file.Close()
		if err != nil {
			return cfg, fmt.Errorf("users file %s: %w", f.usersFile, err)
		}
		if len(users) == 0 {
			// Nobody could log in: surely not what was meant.
			return cfg, fmt.Errorf("users file %s names no users", f.usersFile)
		}
		cfg.Credentials = users.Lookup
	}
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return cfg, errors.New("--tls-cert and --tls-key go together")
	}
	if f.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(f.tlsCert, f.tlsKey)
		if err != nil {
			return cfg, fmt.Errorf("TLS certificate: %w", err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	}
	if f.requireTLS && cfg.TLS == nil {
		return cfg, errors.New("--require-tls needs --tls-cert and --tls-key")
	}
	cfg.RequireTLS = f.requireTLS
	return cfg, nil
}
