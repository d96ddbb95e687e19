package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// nodeChecksums is a node's GET /checksum answer.
type nodeChecksums struct {
	ID     string `json:"id"`
	Seqno  uint64 `json:"applied_seqno"`
	Tables []struct {
		Table string `json:"table"`
		Rows  int64  `json:"rows"`
		Sum   string `json:"checksum"`
	} `json:"tables"`
}

// runChecksum prints every node's per-table checksums and whether they
// agree; it fails if they do not.
func runChecksum(args []string, out io.Writer) error {
	fs := flag.NewFlagSet("certa checksum", flag.ExitOnError)
	nodes := fs.String("http", "127.0.0.1:5533,127.0.0.1:5534,127.0.0.1:5535", "HTTP addresses of the nodes, comma-separated")
	var pf peerFlags // member.go
	pf.register(fs)
	fs.Parse(args)
	client, scheme, err := pf.client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var all []nodeChecksums
	for _, addr := range strings.Split(*nodes, ",") {
		cs, err := fetchChecksums(ctx, client, scheme+"://"+addr)
		if err != nil {
			return err
		}
		all = append(all, cs)
		fmt.Fprintf(out, "%s (applied seqno %d):\n", cs.ID, cs.Seqno)
		for _, t := range cs.Tables {
			fmt.Fprintf(out, "  %-30s %8d rows  %s\n", t.Table, t.Rows, t.Sum)
		}
	}
	for _, cs := range all[1:] {
		if fmt.Sprint(cs.Tables) != fmt.Sprint(all[0].Tables) {
			if cs.Seqno != all[0].Seqno {
				return fmt.Errorf("nodes differ; they are at different seqnos (%d and %d): run again once load stops", all[0].Seqno, cs.Seqno)
			}
			return errors.New("nodes DIFFER at the same seqno: their data diverged")
		}
	}
	fmt.Fprintln(out, "all nodes agree")
	return nil
}

func fetchChecksums(ctx context.Context, client *http.Client, base string) (nodeChecksums, error) {
	var cs nodeChecksums
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/checksum", nil)
	if err != nil {
		return cs, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return cs, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
		return cs, fmt.Errorf("%s: %s: %s", base, resp.Status, b)
	}
	return cs, json.NewDecoder(resp.Body).Decode(&cs)
}
