package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"

	"certa/httpapi"
	"certa/peertls"
)

// peerFlags are the flags of an operator command that calls a node's
// HTTP API: the node, and with peer TLS a certificate of the cluster's CA.
type peerFlags struct {
	files peertls.Files
}

func (p *peerFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&p.files.Cert, "peer-cert", "", "with peer TLS: a certificate of the cluster's CA (a node's)")
	fs.StringVar(&p.files.Key, "peer-key", "", "its key")
	fs.StringVar(&p.files.CA, "peer-ca", "", "the cluster CA's certificate")
}

// client returns an HTTP client for the nodes and the scheme to use.
func (p *peerFlags) client() (*http.Client, string, error) {
	if p.files == (peertls.Files{}) {
		return &http.Client{Timeout: 30 * time.Second}, "http", nil
	}
	peer, err := peertls.Load(p.files)
	if err != nil {
		return nil, "", err
	}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: peer.Client()}}, "https", nil
}

// tlsConfig is the peer TLS to call nodes with (nil without).
func (p *peerFlags) tlsConfig() (*peertls.Config, error) {
	if p.files == (peertls.Files{}) {
		return nil, nil
	}
	return peertls.Load(p.files)
}

// runMember lists the members of a cluster, or removes one.
func runMember(args []string, out io.Writer) error {
	usage := errors.New("usage: certa member list [--http ADDR] | certa member remove ID [--http ADDR] (with peer TLS: --peer-cert, --peer-key, --peer-ca)")
	if len(args) == 0 {
		return usage
	}
	cmd := args[0]
	fs := flag.NewFlagSet("certa member "+cmd, flag.ExitOnError)
	addr := fs.String("http", "127.0.0.1:5533", "HTTP address of any member")
	var pf peerFlags
	pf.register(fs)
	var id string
	rest := args[1:]
	if cmd == "remove" {
		if len(rest) == 0 || rest[0] == "" || rest[0][0] == '-' {
			return usage
		}
		id, rest = rest[0], rest[1:]
	}
	fs.Parse(rest)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	switch cmd {
	case "list":
		cl, scheme, err := pf.client()
		if err != nil {
			return err
		}
		resp, err := cl.Get(scheme + "://" + *addr + "/status")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var st struct {
			Leader  string `json:"leader"`
			Members []struct {
				ID       string `json:"id"`
				PGAddr   string `json:"pg_addr"`
				RaftAddr string `json:"raft_addr"`
				HTTPAddr string `json:"http_addr"`
			} `json:"members"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			return fmt.Errorf("%s/status: %w", *addr, err)
		}
		for _, m := range st.Members {
			role := "voter"
			if m.ID == st.Leader {
				role = "leader"
			}
			fmt.Fprintf(out, "%-12s %-7s pg %-21s http %-21s raft %s\n", m.ID, role, m.PGAddr, m.HTTPAddr, m.RaftAddr)
		}
	case "remove":
		peer, err := pf.tlsConfig()
		if err != nil {
			return err
		}
		var c *httpapi.Client
		if peer != nil {
			c = httpapi.NewClient(peer.Client())
		} else {
			c = httpapi.NewClient(nil)
		}
		if err := c.RemoveMember(ctx, *addr, id); err != nil {
			return err
		}
		fmt.Fprintf(out, "removed %s from the cluster\n", id)
	default:
		return usage
	}
	return nil
}
