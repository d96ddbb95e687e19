package main

import (
	"errors"
	"fmt"
	"net"

	"certa/peertls"
)

// errOpenPeers refuses to start a node whose peer ports a stranger could
// reach without peer TLS.
var errOpenPeers = errors.New("the Raft and HTTP addresses are reachable from other machines, and without peer TLS anyone who reaches them can join the cluster, write to it and read it: " +
	"give every node --peer-cert, --peer-key and --peer-ca (make them with 'certa cert'), " +
	"or pass --insecure-peers if every machine that can reach these ports is trusted (a private network for trying certa out)")

// peerSecurity returns the node's peer TLS from its flags: nil without
// --peer-* flags, which is allowed only when the Raft and HTTP addresses
// are loopback addresses or --insecure-peers says so (fail closed).
func peerSecurity(f nodeFlags) (*peertls.Config, error) {
	if f.peerCert == "" && f.peerKey == "" && f.peerCA == "" {
		if f.insecurePeers || (isLoopback(f.raftAddr) && isLoopback(f.httpAddr)) {
			return nil, nil
		}
		return nil, fmt.Errorf("%w (--raft-addr %s, --http-addr %s)", errOpenPeers, f.raftAddr, f.httpAddr)
	}
	if f.insecurePeers {
		return nil, errors.New("--insecure-peers and --peer-cert/--peer-key/--peer-ca exclude each other")
	}
	cfg, err := peertls.Load(peertls.Files{Cert: f.peerCert, Key: f.peerKey, CA: f.peerCA})
	if err != nil {
		return nil, err
	}
	if cfg.ID != f.id {
		return nil, fmt.Errorf("the peer certificate %s is node %q's, not %q's (--id): every node has its own", f.peerCert, cfg.ID, f.id)
	}
	return cfg, nil
}

// isLoopback reports whether a listen address's host is a loopback
// address (127.0.0.0/8, ::1 or localhost); an empty host listens on all.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
