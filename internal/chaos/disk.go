package chaos

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"

	"certa/internal/localcluster"
)

// diskBytes is the size of each node's data directory in the disk
// scenario: room for a minute or two of the workloads, so filling it
// leaves the node out of space and freeing it leaves plenty. A node keeps
// free a log segment (64 MiB) and twice its newest snapshot (raftlog's
// reserve) besides its database, the database's WAL, two snapshots and the
// log: after a minute of CI's load (an 80 MiB database) that is about
// 650 MiB, so with 512 MiB a node refused entries for good once the
// filler was gone, rightly, and never caught up.
const diskBytes = 1 << 30

// disks are the nodes' data directories, each on a tmpfs of its own.
type disks struct {
	dirs []string
}

// mountDisks mounts a tmpfs of diskBytes on the data directory of each of
// n nodes of a cluster in dir (before the nodes start).
func mountDisks(dir string, n int) (*disks, error) {
	d := &disks{}
	for i := range n {
		p := filepath.Join(dir, localcluster.NodeID(i))
		if err := os.MkdirAll(p, 0o755); err != nil {
			d.unmount()
			return nil, err
		}
		if err := syscall.Mount("tmpfs", p, "tmpfs", 0, fmt.Sprintf("size=%d", diskBytes)); err != nil {
			d.unmount()
			return nil, fmt.Errorf("mount a tmpfs on %s (needs root): %w", p, err)
		}
		d.dirs = append(d.dirs, p)
	}
	return d, nil
}

func (d *disks) filler(i int) string { return filepath.Join(d.dirs[i], "chaos-filler") }

// fill writes to node i's disk until no space is left.
func (d *disks) fill(i int) error {
	f, err := os.Create(d.filler(i))
	if err != nil {
		return nil // already full
	}
	defer f.Close()
	buf := make([]byte, 1<<20)
	for {
		if _, err := f.Write(buf); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				return fmt.Errorf("filling %s: %w", d.filler(i), err)
			}
			break
		}
	}
	// Fill the last partial page too.
	io.WriteString(f, "x")
	return nil
}

// free frees node i's disk.
func (d *disks) free(i int) { os.Remove(d.filler(i)) }

func (d *disks) unmount() {
	for _, p := range d.dirs {
		syscall.Unmount(p, syscall.MNT_DETACH)
	}
}
