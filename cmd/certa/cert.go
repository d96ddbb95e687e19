package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"certa/peertls"
)

// runCert makes the cluster's CA and its nodes' certificates for peer TLS
// (certa node --peer-cert, --peer-key, --peer-ca).
func runCert(args []string, out io.Writer) error {
	if len(args) == 0 || (args[0] != "ca" && args[0] != "node") {
		return errors.New("usage: certa cert ca --dir DIR | certa cert node --dir DIR --id ID --hosts HOST[,HOST...]")
	}
	fs := flag.NewFlagSet("certa cert "+args[0], flag.ExitOnError)
	dir := fs.String("dir", "certs", "directory of the CA (ca.crt, ca.key) and of the node certificates")
	days := fs.Int("days", 0, "validity in days (default: 3650 for a CA, 825 for a node)")
	id := fs.String("id", "", "node id (certa node --id) the certificate is for")
	hosts := fs.String("hosts", "", "comma-separated IP addresses and DNS names of the node's --raft-addr and --http-addr; peers check the host they dial against them")
	fs.Parse(args[1:])
	switch args[0] {
	case "ca":
		if err := peertls.MakeCA(*dir, validity(*days, 3650)); err != nil {
			return err
		}
		fmt.Fprintf(out, "made the cluster CA: %s/%s (give it to every node as --peer-ca) and its key %s/%s (keep it off the nodes)\n",
			*dir, peertls.CACertFile, *dir, peertls.CAKeyFile)
	case "node":
		var hs []string
		for _, h := range strings.Split(*hosts, ",") {
			if h = strings.TrimSpace(h); h != "" {
				hs = append(hs, h)
			}
		}
		if err := peertls.MakeNodeCert(*dir, *id, hs, validity(*days, 825)); err != nil {
			return err
		}
		f := peertls.NodeFiles(*dir, *id)
		fmt.Fprintf(out, "made node %s's certificate: certa node --id %s --peer-cert %s --peer-key %s --peer-ca %s\n", *id, *id, f.Cert, f.Key, f.CA)
	}
	return nil
}

func validity(days, dflt int) time.Duration {
	if days <= 0 {
		days = dflt
	}
	return time.Duration(days) * 24 * time.Hour
}
