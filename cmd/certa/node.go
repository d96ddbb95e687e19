package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"time"

	"certa/engine/sqlite"
	"certa/httpapi"
	"certa/orderlog/raftlog"
	"certa/pgwire"
	"certa/replica"
	"certa/writeset"
)

// nodeFlags are the settings of one node.
type nodeFlags struct {
	id, dataDir, pgAddr, raftAddr, httpAddr, join string
	applyGrace, lockTimeout, commitTimeout        time.Duration
	snapshotEntries, trailingEntries              uint64
	snapshotInterval                              time.Duration
	statementTimeout, idleInTxTimeout             time.Duration
	logSegmentBytes, maxConnections               int
	maxWriteSet                                   byteSize
	usersFile, tlsCert, tlsKey                    string
	requireTLS                                    bool
}

func runNode(args []string) error {
	if os.Getenv("GOGC") == "" {
		// A node's heap is small (tens of MB) and its garbage is mostly
		// short-lived per-statement buffers: collecting at 4x the live heap
		// rather than 2x cut the collector's share of a node's CPU under
		// oltp-write from 2% to 0.5%.
		debug.SetGCPercent(400)
	}
	var f nodeFlags
	fs := flag.NewFlagSet("certa node", flag.ExitOnError)
	fs.StringVar(&f.id, "id", "", "node id, unique in the cluster (required)")
	fs.StringVar(&f.dataDir, "data-dir", "", "directory for the node's database and log (required)")
	fs.StringVar(&f.pgAddr, "pg-addr", "127.0.0.1:5433", "address for PostgreSQL clients")
	fs.StringVar(&f.raftAddr, "raft-addr", "127.0.0.1:7433", "address for Raft traffic between nodes")
	fs.StringVar(&f.httpAddr, "http-addr", "127.0.0.1:8433", "address for the HTTP API (status, metrics, join)")
	fs.StringVar(&f.join, "join", "", "HTTP address(es) of members to join, comma-separated; omit to bootstrap a new cluster")
	fs.DurationVar(&f.applyGrace, "apply-grace", 100*time.Millisecond, "how long replication waits for a local transaction holding the write lock before aborting it")
	fs.DurationVar(&f.lockTimeout, "lock-timeout", 5*time.Second, "how long a local writer waits for the write lock held by another local transaction")
	fs.DurationVar(&f.commitTimeout, "commit-timeout", 8*time.Second, "how long COMMIT waits for the cluster before reporting an unknown outcome (40003)")
	fs.Uint64Var(&f.snapshotEntries, "snapshot-entries", 8192, "log entries after which the node snapshots its database and compacts the log")
	fs.DurationVar(&f.snapshotInterval, "snapshot-interval", 10*time.Second, "how often the node checks whether to snapshot (it waits between this and twice this)")
	fs.Uint64Var(&f.trailingEntries, "trailing-entries", 10240, "log entries kept after a snapshot, so a lagging node can catch up without a full state transfer")
	fs.DurationVar(&f.statementTimeout, "statement-timeout", 0, "default statement_timeout of sessions: longer statements are cancelled with 57014 (0: none)")
	fs.DurationVar(&f.idleInTxTimeout, "idle-in-transaction-timeout", 0, "end sessions idle inside a transaction block longer than this, with 25P03 (0: never)")
	fs.IntVar(&f.maxConnections, "max-connections", pgwire.DefaultMaxConns, "client connections served at once; more get 53300")
	fs.IntVar(&f.logSegmentBytes, "log-segment-bytes", 64<<20, "size of one Raft log file; compaction frees whole files")
	f.maxWriteSet = replica.DefaultMaxWriteSetBytes
	fs.Var(&f.maxWriteSet, "max-writeset-size", "largest write set a transaction may commit (its row changes and keys, in bytes, or with KiB/MiB); larger ones get 54000 at COMMIT. At most 60MiB; give every node the same")
	fs.StringVar(&f.usersFile, "users-file", "", "`file` of users allowed to connect, one name:SCRAM-SHA-256$... line each (see 'certa passwd'); clients must then log in with SCRAM-SHA-256. Omit to accept any user name without a password (trust)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate (chain) for TLS with clients; needs --tls-key. Omit to refuse TLS (clients connect in the clear)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.BoolVar(&f.requireTLS, "require-tls", false, "refuse clients that do not use TLS (needs --tls-cert)")
	fs.Parse(args)
	if os.Getenv("GOMEMLIMIT") == "" {
		// With the collector at 4x the live heap, committing a large
		// write set (whose copies are live for a moment) grew a node's
		// heap to 2.4 GB for a 47 MB write set, and the memory stayed
		// taken. A soft limit makes the collector run sooner, and give
		// memory back, once the heap nears it (with a 1 GiB limit: 1.0 GB).
		debug.SetMemoryLimit(memoryLimit(int64(f.maxWriteSet)))
	}
	if f.id == "" || f.dataDir == "" {
		fs.Usage()
		return errors.New("--id and --data-dir are required")
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("node", f.id)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveNode(ctx, f, logger)
}

// serveNode runs a node until ctx ends, then shuts it down cleanly.
func serveNode(ctx context.Context, f nodeFlags, logger *slog.Logger) error {
	pgCfg, err := clientSecurity(f)
	if err != nil {
		return err
	}
	pgCfg.Logger = logger
	pgCfg.IdleInTransactionTimeout = f.idleInTxTimeout
	pgCfg.MaxConns = f.maxConnections
	if err := pgCfg.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(f.dataDir, 0o755); err != nil {
		return err
	}
	eng, err := sqlite.Open(sqlite.Config{
		Path:        filepath.Join(f.dataDir, "data.db"),
		ApplyGrace:  f.applyGrace,
		LockTimeout: f.lockTimeout,
	})
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer eng.Close()

	api := httpapi.NewHandler(logger)
	self := writeset.Member{ID: f.id, PGAddr: f.pgAddr, RaftAddr: f.raftAddr, HTTPAddr: f.httpAddr}
	node, err := replica.New(replica.Config{
		Self:             self,
		CommitTimeout:    f.commitTimeout,
		StatementTimeout: f.statementTimeout,
		MaxWriteSetBytes: int(f.maxWriteSet),
		ObserveCommit:    api.ObserveCommit,
		Logger:           logger,
		Fatal: func(err error) {
			// Applying would diverge from the other nodes: stop instead.
			logger.Error("stopping node: cannot apply the log", "err", err)
			os.Exit(3)
		},
	}, eng)
	if err != nil {
		return err
	}
	raftDir := filepath.Join(f.dataDir, "raft")
	resumed := raftlog.HasState(raftDir)
	lg, err := raftlog.Open(raftlog.Config{
		ID: f.id, Dir: raftDir, RaftAddr: f.raftAddr,
		Bootstrap:         !resumed && f.join == "",
		SnapshotThreshold: f.snapshotEntries,
		SnapshotInterval:  f.snapshotInterval,
		TrailingLogs:      f.trailingEntries,
		SegmentBytes:      f.logSegmentBytes,
		Logger:            logger,
	}, node.StateMachine())
	if err != nil {
		return err
	}
	defer lg.Close()
	node.Start(lg, httpapi.NewClient())
	defer node.Close()
	api.SetNode(node)

	httpLn, err := net.Listen("tcp", f.httpAddr)
	if err != nil {
		return fmt.Errorf("listen for HTTP: %w", err)
	}
	httpSrv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	go httpSrv.Serve(httpLn)
	defer httpSrv.Close()

	if !resumed && f.join != "" {
		logger.Info("joining cluster", "via", f.join)
		jctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		err := node.JoinVia(jctx, strings.Split(f.join, ","))
		cancel()
		if err != nil {
			return err
		}
	}

	pgLn, err := net.Listen("tcp", f.pgAddr)
	if err != nil {
		return fmt.Errorf("listen for PostgreSQL clients: %w", err)
	}
	pg := pgwire.NewServer(pgCfg, backend{node})
	go pg.Serve(pgLn)
	defer pg.Close()
	auth, tlsMode := "trust", "off"
	if pgCfg.Credentials != nil {
		auth = "scram-sha-256"
	}
	if pgCfg.TLS != nil {
		tlsMode = "offered"
	}
	if pgCfg.RequireTLS {
		tlsMode = "required"
	}
	logger.Info("node ready", "pg", f.pgAddr, "http", f.httpAddr, "raft", f.raftAddr, "resumed", resumed, "auth", auth, "tls", tlsMode)

	<-ctx.Done()
	logger.Info("shutting down")
	return nil
}

// backend opens replica sessions for pgwire connections.
type backend struct{ node *replica.Node }

func (b backend) NewSession(ctx context.Context, user, database string) (pgwire.Session, error) {
	return b.node.NewSession(), nil
}

// byteSize is a flag value in bytes, written as a number of bytes or with
// a KiB, MiB or GiB suffix ("32MiB").
type byteSize int

func (b *byteSize) String() string { return strconv.Itoa(int(*b)) }

func (b *byteSize) Set(s string) error {
	num, unit := s, 1
	for _, u := range []struct {
		suffix string
		n      int
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(s, u.suffix) {
			num, unit = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.n
			break
		}
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || n > math.MaxInt32/unit {
		return fmt.Errorf("%q is not a size: write a positive number of bytes, or one with KiB, MiB or GiB", s)
	}
	*b = byteSize(n * unit)
	return nil
}

// memoryLimit is the Go runtime's soft memory limit for a node whose write
// sets are at most maxWriteSet bytes: 512 MiB, plus 16 times the largest
// write set (a commit holds about ten copies of it for a moment). The heap
// may grow past it when that much is live; the collector then runs often.
func memoryLimit(maxWriteSet int64) int64 { return 512<<20 + 16*maxWriteSet }
