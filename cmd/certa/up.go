package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"certa/orderlog/raftlog"
)

// runUp starts a local cluster of child `certa node` processes and stays in
// the foreground until interrupted, then stops them all.
func runUp(args []string) error {
	fs := flag.NewFlagSet("certa up", flag.ExitOnError)
	nodes := fs.Int("nodes", 3, "number of nodes")
	dataDir := fs.String("data-dir", "certa-data", "directory holding one data directory per node")
	portBase := fs.Int("port-base", 5433, "node k listens for clients on port-base+k-1, HTTP on port-base+100+k-1, Raft on port-base+200+k-1")
	engineName := fs.String("engine", "sqlite", "the nodes' database engine: sqlite, or postgres (each node runs a PostgreSQL server; experimental, see certa node --help)")
	secure := fs.Bool("secure", false, "run the cluster as in production: certificates for TLS between nodes and with clients (a CA in data-dir/certs), and a user certa whose password is printed")
	fs.Parse(args)
	if *nodes < 1 || *nodes > 9 {
		return errors.New("--nodes must be between 1 and 9")
	}
	var sec *upSecurity // upsecure.go
	if *secure {
		var err error
		if sec, err = secureUp(*dataDir, *nodes); err != nil {
			return fmt.Errorf("--secure: %w", err)
		}
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var procs []*child
	var wg sync.WaitGroup
	exited := make(chan string, *nodes)
	// Only a cluster whose nodes all start afresh is bootstrapped (by
	// node1). A node without state joins through a node that has some: a
	// node whose directory was removed must never start a cluster of its
	// own beside the one it belonged to.
	dirs := make([]string, *nodes+1)
	member := 0 // the first node with state
	for k := *nodes; k >= 1; k-- {
		dirs[k] = filepath.Join(*dataDir, fmt.Sprintf("node%d", k))
		if raftlog.HasState(filepath.Join(dirs[k], "raft")) {
			member = k
		}
	}
	for k := 1; k <= *nodes; k++ {
		id := fmt.Sprintf("node%d", k)
		a := []string{"node", "--id", id, "--data-dir", dirs[k],
			"--pg-addr", fmt.Sprintf("127.0.0.1:%d", *portBase+k-1),
			"--http-addr", fmt.Sprintf("127.0.0.1:%d", *portBase+100+k-1),
			"--raft-addr", fmt.Sprintf("127.0.0.1:%d", *portBase+200+k-1),
			"--engine", *engineName}
		switch {
		case member == 0 && k == 1:
			a = append(a, "--bootstrap")
		case member == 0:
			a = append(a, "--join", fmt.Sprintf("127.0.0.1:%d", *portBase+100)) // join node1
		case !raftlog.HasState(filepath.Join(dirs[k], "raft")):
			a = append(a, "--join", fmt.Sprintf("127.0.0.1:%d", *portBase+100+member-1))
		}
		if sec != nil {
			a = append(a, sec.nodeArgs(id)...)
		}
		cmd := exec.Command(exe, a...)
		// certa up killed outright takes its nodes with it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
		out, _ := cmd.StdoutPipe()
		cmd.Stderr = cmd.Stdout
		if err := cmd.Start(); err != nil {
			stopAll(procs)
			return fmt.Errorf("start %s: %w", id, err)
		}
		c := &child{cmd: cmd, done: make(chan struct{})}
		procs = append(procs, c)
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Everything the node said is relayed before it counts as
			// exited: Wait closes the pipe, and its last lines (why it
			// stopped) would be lost.
			prefixLines(os.Stderr, out, "["+id+"] ")
			c.cmd.Wait()
			close(c.done)
			exited <- id
		}()
	}

	status := &http.Client{Timeout: 5 * time.Second}
	scheme := "http"
	if sec != nil {
		status.Transport = &http.Transport{TLSClientConfig: sec.status}
		scheme = "https"
	}
	if err := waitForCluster(ctx, status, scheme, *portBase, *nodes, exited); err != nil {
		stopAll(procs)
		wg.Wait() // the nodes' last words before certa up's
		return err
	}
	fmt.Printf("\ncerta: %d-node cluster is up (data in %s). Connect with psql:\n", *nodes, *dataDir)
	for k := 1; k <= *nodes; k++ {
		if sec != nil {
			fmt.Printf("  psql \"%s\"\n", sec.connString(*portBase+k-1))
		} else {
			fmt.Printf("  psql \"host=127.0.0.1 port=%d user=certa dbname=certa sslmode=disable\"\n", *portBase+k-1)
		}
	}
	if sec != nil {
		fmt.Printf("Between nodes: mutual TLS with the CA in %s; clients: TLS required, user %s (password in %s).\n",
			sec.certDir, sec.user, filepath.Join(*dataDir, "password"))
		fmt.Printf("Status: curl --cacert %s https://127.0.0.1:%d/status   Press Ctrl-C to stop every node.\n\n",
			filepath.Join(sec.certDir, "ca.crt"), *portBase+100)
	} else {
		fmt.Printf("Status: curl http://127.0.0.1:%d/status   Press Ctrl-C to stop every node.\n\n", *portBase+100)
	}

	select {
	case <-ctx.Done():
	case id := <-exited:
		fmt.Fprintf(os.Stderr, "certa: %s exited; stopping the cluster\n", id)
	}
	stopAll(procs)
	wg.Wait()
	return nil
}

// child is a started node process; done closes when it has exited.
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
}

// stopAll asks every node to stop, then kills those still running after 15s.
func stopAll(procs []*child) {
	for _, c := range procs {
		c.cmd.Process.Signal(syscall.SIGTERM)
	}
	timeout := time.After(15 * time.Second)
	for _, c := range procs {
		select {
		case <-c.done:
		case <-timeout:
			c.cmd.Process.Kill()
		}
	}
}

// waitForCluster polls every node's status until all of them report the
// whole membership and a leader, and take clients. A node that exits
// meanwhile (its ports taken, its data directory refused) ends the wait.
func waitForCluster(ctx context.Context, status *http.Client, scheme string, portBase, n int, exited <-chan string) error {
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) {
		ready := 0
		for k := 1; k <= n; k++ {
			var st struct {
				Leader  string `json:"leader"`
				Members []struct {
					PGAddr string `json:"pg_addr"`
				} `json:"members"`
			}
			resp, err := status.Get(fmt.Sprintf("%s://127.0.0.1:%d/status", scheme, portBase+100+k-1))
			if err != nil {
				continue
			}
			json.NewDecoder(resp.Body).Decode(&st)
			resp.Body.Close()
			complete := st.Leader != "" && len(st.Members) == n
			for _, m := range st.Members {
				complete = complete && m.PGAddr != ""
			}
			if complete { // a joining node takes clients once it has joined
				c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", portBase+k-1), time.Second)
				if complete = err == nil; complete {
					c.Close()
				}
			}
			if complete {
				ready++
			}
		}
		if ready == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case id := <-exited:
			return fmt.Errorf("%s exited before the cluster came up (its log above says why; if its ports are taken, choose others with --port-base)", id)
		case <-time.After(200 * time.Millisecond):
		}
	}
	return errors.New("the cluster did not come up within 90s (see the node logs above)")
}

// prefixLines copies r's lines to w, each after prefix, until r ends; a
// line too long for that is copied as it is, with the rest (so that the
// node writing never blocks on a full pipe).
func prefixLines(w io.Writer, r io.Reader, prefix string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fmt.Fprintln(w, prefix+sc.Text())
	}
	io.Copy(w, r)
}
