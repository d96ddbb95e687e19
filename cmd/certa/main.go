// Command certa runs certa: a multi-master, synchronously replicated SQL
// cluster that clients reach with the PostgreSQL protocol.
//
//	certa node  ...   run one node
//	certa up    ...   run a local cluster for trying certa out
//	certa bench ...   measure a cluster against a local SQLite baseline
//	certa passwd USER print a users-file line for USER (password on stdin)
//	certa cert  ...   make the cluster CA and node certificates for peer TLS
//	certa member ...  list a cluster's members, or remove one
//	certa checksum    compare the nodes' data (per-table checksums)
//	certa chaos       run the fault-injection suite and print its table
package main

import (
	"fmt"
	"os"
	"syscall"
)

const usage = `usage: certa <command> [flags]

commands:
  node    run one node of a cluster
  up      start a local cluster (3 nodes on embedded SQLite) and print how to connect
  bench   measure commits/s and latency of a cluster against a local SQLite baseline
  passwd  print a --users-file line for a user, reading the password from standard input
  cert    make the cluster's CA (cert ca) and node certificates (cert node) for peer TLS
  member  list a cluster's members (member list), or remove a dead one (member remove ID)
  checksum print every node's per-table checksums and whether the nodes agree
  chaos   run the fault-injection suite (kills, pauses) with checked workloads

Run 'certa <command> -h' for the flags of a command.
`

func main() {
	if len(os.Args) < 2 {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	if os.Args[1] == "node" || os.Args[1] == "up" {
		// What a node writes holds the cluster's data: it is its owner's
		// only (0600 files, 0700 directories), also what libraries create
		// with 0644 and 0755 of their own (the Raft log's files and its
		// snapshots, SQLite's database and WAL). up's nodes inherit it.
		syscall.Umask(0o077)
	}
	var err error
	switch os.Args[1] {
	case "node":
		err = runNode(os.Args[2:])
	case "up":
		err = runUp(os.Args[2:])
	case "bench":
		err = runBench(os.Args[2:])
	case "chaos":
		err = runChaos(os.Args[2:])
	case "checksum":
		err = runChecksum(os.Args[2:], os.Stdout)
	case "cert":
		err = runCert(os.Args[2:], os.Stdout)
	case "member":
		err = runMember(os.Args[2:], os.Stdout)
	case "passwd":
		err = runPasswd(os.Args[2:], os.Stdin, os.Stdout, os.Stderr)
	case "-h", "--help", "help":
		fmt.Print(usage)
		return
	default:
		fmt.Fprintf(os.Stderr, "certa: unknown command %q\n\n%s", os.Args[1], usage)
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "certa:", err)
		os.Exit(1)
	}
}
