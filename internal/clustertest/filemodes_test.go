package clustertest

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"certa/internal/localcluster"
	"certa/internal/pgclient"
	"certa/internal/testcluster"
)

// openUmask runs the nodes under umask 000, so that a file or directory
// comes out with the mode its creator asked for (an explicit mode, or a
// library's 0644 and 0755) unless the node itself sees to it.
type openUmask struct{}

func (openUmask) Addrs(int) (pg, http, raft string, err error) { return "", "", "", nil }

func (openUmask) Command(_ int, name string, args ...string) *exec.Cmd {
	return exec.Command("/bin/sh", append([]string{"-c", `umask 000 && exec "$0" "$@"`, name}, args...)...)
}

// Everything a node writes in its data directory is its owner's only,
// whatever the umask it was started with: the SQLite database and its WAL,
// the Raft log's segments, metadata store and snapshots (files the
// libraries create 0644 in 0755 directories), the lock file. Two nodes, so
// that the second joins (a catching-up marker, a received snapshot), with
// frequent snapshots and small log files (rotation), a row written on
// each. On the postgres engine, the node's directory is 0711 when the node
// runs as root (the postgres user, who runs the server, passes through to
// <data-dir>/pg), and PostgreSQL's own directory keeps a mode PostgreSQL
// accepts (0700, or 0750 with group access).
func TestDataDirectoryOwnerOnly(t *testing.T) {
	t.Run("sqlite", func(t *testing.T) {
		nodes := startOpenUmask(t, 2, snapshotArgs...)
		for i := range nodes {
			checkOwnerOnly(t, nodes[i].DataDir, 0o700, "")
			for _, name := range []string{"LOCK", "data.db", "data.db-wal", "raft/wal", "raft/snapshots"} {
				if _, err := os.Stat(filepath.Join(nodes[i].DataDir, name)); err != nil {
					t.Errorf("%s: %v (the test expects to see it)", nodes[i].ID, err)
				}
			}
			if snaps, _ := filepath.Glob(filepath.Join(nodes[i].DataDir, "raft/snapshots/*/state.bin")); len(snaps) == 0 {
				t.Errorf("%s: no snapshot written (the test expects to see one)", nodes[i].ID)
			}
		}
	})
	t.Run("postgres", func(t *testing.T) {
		letPostgresIn(t)
		nodes := startOpenUmask(t, 2, append([]string{"--engine", "postgres"}, snapshotArgs...)...)
		dirMode := fs.FileMode(0o700)
		if os.Geteuid() == 0 {
			dirMode = 0o711
		}
		for i := range nodes {
			checkOwnerOnly(t, nodes[i].DataDir, dirMode, "pg")
			pg := filepath.Join(nodes[i].DataDir, "pg")
			info, err := os.Stat(pg)
			if err != nil {
				t.Fatal(err)
			}
			if m := info.Mode().Perm(); m != 0o700 && m != 0o750 {
				t.Errorf("%s: PostgreSQL's data directory has mode %v (PostgreSQL wants 0700 or 0750)", nodes[i].ID, m)
			}
		}
	})
}

// startOpenUmask starts an n-node cluster whose nodes run under umask 000,
// writes a table and rows through every node until each has taken a
// snapshot, and returns the nodes (stopped when the test ends).
func startOpenUmask(t *testing.T, n int, args ...string) []*localcluster.Node {
	t.Helper()
	c, err := localcluster.Start(localcluster.Config{Binary: testcluster.Binary(t), Dir: t.TempDir(), Args: args, Net: openUmask{}}, n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Stop()
		if t.Failed() {
			for i, node := range c.Nodes {
				t.Logf("---- log of %s (tail) ----\n%s", node.ID, c.LogTail(i, 4000))
			}
		}
	})
	if err := localcluster.Poll(90*time.Second, c.Ready); err != nil {
		t.Fatalf("cluster ready: %v", err)
	}
	ctx := ctxT(t)
	for i := range c.Nodes {
		conn, err := pgclient.Connect(ctx, c.Nodes[i].PGAddr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		if i == 0 {
			mustExec(t, conn, "CREATE TABLE secret (id integer PRIMARY KEY, v text)")
		}
		if err := localcluster.Poll(30*time.Second, func() error {
			_, err := conn.Exec(ctx, "INSERT INTO secret VALUES ($1, 'row replicated to every node')", 1000*i)
			return err
		}); err != nil {
			t.Fatalf("write on %s: %v", c.Nodes[i].ID, err)
		}
		for k := 1; k < 40; k++ {
			mustExec(t, conn, "INSERT INTO secret VALUES ($1, 'row replicated to every node')", 1000*i+k)
		}
	}
	for i := range c.Nodes {
		if err := localcluster.Poll(30*time.Second, func() error {
			st, err := c.Status(i)
			if err == nil && st.SnapshotIndex == 0 {
				err = fmt.Errorf("no snapshot yet")
			}
			return err
		}); err != nil {
			t.Fatalf("%s: a snapshot: %v", c.Nodes[i].ID, err)
		}
	}
	return c.Nodes
}

// checkOwnerOnly checks that dir has mode dirMode and that nothing in it
// (but the entry skip, not looked into) lets group or others read, write
// or enter it.
func checkOwnerOnly(t *testing.T, dir string, dirMode fs.FileMode, skip string) {
	t.Helper()
	info, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m := info.Mode().Perm(); m != dirMode {
		t.Errorf("%s: mode %v, want %v", dir, m, dirMode)
	}
	seen, loose := 0, 0
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) { // removed meanwhile (a snapshot's temporary files)
			return nil
		}
		if err != nil {
			return err
		}
		if path == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, path)
		if rel == skip {
			return filepath.SkipDir
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		seen++
		if m := info.Mode(); m.Perm()&0o077 != 0 && m&fs.ModeSymlink == 0 {
			t.Errorf("%s: mode %v lets group or others in", path, m)
			loose++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen < 5 {
		t.Errorf("%s holds %d entries: the test expects a node's files", dir, seen)
	}
	t.Logf("%s (%v): %d entries, %d of them group or other accessible", dir, info.Mode().Perm(), seen, loose)
}
