package replica

import (
	"fmt"
	"time"

	"certa/orderlog"
	"certa/sqlerr"
	"certa/writeset"
)

// Size limits. Every log entry must fit in orderlog.MaxEntryBytes: a
// write set is at most Config.MaxWriteSetBytes, and the submitter packs
// several into one entry only up to maxBatchBytes (submit.go), so an
// entry holds one write set of up to MaxWriteSetBytesLimit or a batch of
// up to maxBatchBytes, plus writeset.MaxBatchOverhead.
const (
	// DefaultMaxWriteSetBytes is the default of Config.MaxWriteSetBytes:
	// half of what a log entry holds. Committing one holds several copies
	// of it in memory for a moment on every node, and everything after it
	// in the log waits while it applies (seconds per 10 MB).
	DefaultMaxWriteSetBytes = 32 << 20
	// MaxWriteSetBytesLimit is the most Config.MaxWriteSetBytes may be.
	MaxWriteSetBytesLimit = 60 << 20
)

// The largest write set, and a batch of small ones, must fit in a log
// entry (this fails to compile otherwise).
const (
	_ = uint(orderlog.MaxEntryBytes - writeset.MaxBatchOverhead - MaxWriteSetBytesLimit)
	_ = uint(orderlog.MaxEntryBytes - writeset.MaxBatchOverhead - maxBatchBytes)
)

// commitBytesPerSecond is the rate of replication a COMMIT's wait for its
// outcome allows for on top of Config.CommitTimeout, so that a large write
// set that commits is not reported as of unknown outcome (40003) because
// sending, writing and applying it took longer than the timeout. On a
// 3-node cluster sharing two busy cores, write sets of 30-47 MB took 9-22 s
// from submission to outcome (2-3 MB/s); the applying part of that is
// covered by maxApplyExtension, the rest by this rate.
const commitBytesPerSecond = 4 << 20

// commitWait is how long a COMMIT of a write set of size bytes waits for
// its outcome: Config.CommitTimeout, plus a second per
// commitBytesPerSecond of the write set.
func (n *Node) commitWait(size int) time.Duration {
	return n.cfg.CommitTimeout + time.Duration(size)*time.Second/commitBytesPerSecond
}

// maxApplyExtension bounds how much longer than commitWait a COMMIT waits
// for its outcome while this node is busy applying (Node.Commit): four
// times CommitTimeout, enough for the largest write set to apply on a slow
// node, and still a bound when the node applies without pause.
func (n *Node) maxApplyExtension() time.Duration { return 4 * n.cfg.CommitTimeout }

// maxEntryBytes is the largest log entry a node whose write sets are at
// most maxWriteSet bytes makes.
func maxEntryBytes(maxWriteSet int) int {
	return max(maxWriteSet, maxBatchBytes) + writeset.MaxBatchOverhead
}

// errTooLarge refuses a write set of size bytes over limit.
func errTooLarge(size, limit int) error {
	return &sqlerr.Error{
		Code: sqlerr.ProgramLimitExceeded,
		Message: fmt.Sprintf("certa: the transaction is too large to replicate: its write set is %s, over the limit of %s",
			formatBytes(size), formatBytes(limit)),
		Detail: "Nothing was committed.",
		Hint: fmt.Sprintf("Split the work into smaller transactions, or raise the limit on every node (certa node --max-writeset-size, at most %s).",
			formatBytes(MaxWriteSetBytesLimit)),
	}
}

// errLeaderRefusedSize is the error of write sets the leader refused as
// too large (its limit is lower than this node's).
func errLeaderRefusedSize(err error) error {
	return &sqlerr.Error{
		Code:    sqlerr.ProgramLimitExceeded,
		Message: "certa: the transaction is too large to replicate: the leader refused its write set as over the leader's size limit",
		Detail:  "Nothing was committed. " + err.Error(),
		Hint:    "Split the work into smaller transactions, or give every node the same --max-writeset-size.",
		Err:     err,
	}
}

// formatBytes writes n as a person reads it: "512 bytes", "1.5 MiB".
func formatBytes(n int) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
