package main

import (
	"context"
	"crypto/tls"
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

	"certa/datadir"
	"certa/engine"
	"certa/engine/postgres"
	"certa/engine/sqlite"
	"certa/httpapi"
	"certa/orderlog/raftlog"
	"certa/pgwire"
	"certa/replica"
	"certa/writeset"
)

// nodeFlags are the settings of one node.
type nodeFlags struct {
	id, dataDir, pgAddr, raftAddr, httpAddr, join  string
	bootstrap                                      bool
	applyGrace, lockTimeout, commitTimeout         time.Duration
	snapshotEntries, trailingEntries               uint64
	snapshotInterval                               time.Duration
	statementTimeout, idleInTxTimeout, authTimeout time.Duration
	logSegmentBytes, maxConnections                int
	maxWriteSet                                    byteSize
	readFilterFPRate                               float64
	usersFile, tlsCert, tlsKey                     string
	requireTLS                                     bool
	peerCert, peerKey, peerCA                      string
	insecurePeers                                  bool
	engine, postgresBin, postgresDSN               string
}

func runNode(args []string) error {
	if os.Getenv("GOGC") == "" {
		paceGC() // gc.go
	}
	var f nodeFlags
	fs := flag.NewFlagSet("certa node", flag.ExitOnError)
	fs.StringVar(&f.id, "id", "", "node id, unique in the cluster (required)")
	fs.StringVar(&f.dataDir, "data-dir", "", "directory for the node's database and log (required)")
	fs.StringVar(&f.pgAddr, "pg-addr", "127.0.0.1:5433", "address for PostgreSQL clients")
	fs.StringVar(&f.raftAddr, "raft-addr", "127.0.0.1:7433", "address for Raft traffic between nodes")
	fs.StringVar(&f.httpAddr, "http-addr", "127.0.0.1:8433", "address for the HTTP API (status, metrics, join)")
	fs.StringVar(&f.join, "join", "", "HTTP address(es) of members to join, comma-separated, for a node with no state yet (ignored once it has state)")
	fs.BoolVar(&f.bootstrap, "bootstrap", false, "start a new cluster with this node as its only member; only for the first start of the first node (refused on a data directory with state)")
	fs.DurationVar(&f.applyGrace, "apply-grace", 100*time.Millisecond, "how long replication waits for a local transaction holding the write lock before aborting it")
	fs.DurationVar(&f.lockTimeout, "lock-timeout", 5*time.Second, "how long a local writer waits for the write lock (--engine postgres: a row lock) held by another local transaction; then it fails with 40001")
	fs.DurationVar(&f.commitTimeout, "commit-timeout", 8*time.Second, "how long COMMIT waits for the cluster before reporting an unknown outcome (40003)")
	fs.Uint64Var(&f.snapshotEntries, "snapshot-entries", 8192, "log entries after which the node snapshots its database and compacts the log")
	fs.DurationVar(&f.snapshotInterval, "snapshot-interval", 10*time.Second, "how often the node checks whether to snapshot (it waits between this and twice this)")
	fs.Uint64Var(&f.trailingEntries, "trailing-entries", 10240, "log entries kept after a snapshot, so a lagging node can catch up without a full state transfer")
	fs.DurationVar(&f.statementTimeout, "statement-timeout", 0, "default statement_timeout of sessions: longer statements are cancelled with 57014 (0: none)")
	fs.DurationVar(&f.idleInTxTimeout, "idle-in-transaction-timeout", 0, "end sessions idle inside a transaction block longer than this, with 25P03 (0: never)")
	fs.DurationVar(&f.authTimeout, "auth-timeout", pgwire.DefaultStartupTimeout, "time a client has from connecting to being authenticated; connections not yet authenticated do not count against --max-connections (at most 32 from one address authenticate at once; more wait)")
	fs.IntVar(&f.maxConnections, "max-connections", pgwire.DefaultMaxConns, "client connections served at once; more get 53300")
	fs.IntVar(&f.logSegmentBytes, "log-segment-bytes", 64<<20, "size of one Raft log file; compaction frees whole files")
	f.maxWriteSet = replica.DefaultMaxWriteSetBytes
	fs.Var(&f.maxWriteSet, "max-writeset-size", "largest write set a transaction may commit (its row changes and keys, in bytes, or with KiB/MiB); larger ones get 54000 at COMMIT. At most 60MiB; give every node the same")
	fs.Float64Var(&f.readFilterFPRate, "read-filter-fp-rate", writeset.DefaultFilterFPRate, "false-positive rate of the Bloom filters a serializable transaction that read many keys sends them in (above 0, at most 0.5): the share of rows it did not read that may still fail it")
	fs.StringVar(&f.usersFile, "users-file", "", "`file` of users allowed to connect, one name:SCRAM-SHA-256$... line each (see 'certa passwd'); clients must then log in with SCRAM-SHA-256. Omit to accept any user name without a password (trust)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "PEM certificate (chain) for TLS with clients; needs --tls-key. Omit to refuse TLS (clients connect in the clear)")
	fs.StringVar(&f.tlsKey, "tls-key", "", "PEM private key of --tls-cert")
	fs.BoolVar(&f.requireTLS, "require-tls", false, "refuse clients that do not use TLS (needs --tls-cert)")
	fs.StringVar(&f.peerCert, "peer-cert", "", "PEM certificate of this node, signed by the cluster's CA, with --id as its common name (see 'certa cert'): node-to-node traffic is then mutual TLS")
	fs.StringVar(&f.peerKey, "peer-key", "", "PEM private key of --peer-cert")
	fs.StringVar(&f.peerCA, "peer-ca", "", "PEM certificate of the cluster's CA: only nodes with a certificate it signed may join, replicate, vote or call internal endpoints")
	fs.BoolVar(&f.insecurePeers, "insecure-peers", false, "allow Raft and HTTP addresses that are not loopback without peer TLS: anyone who reaches them owns the cluster (for trying out on a trusted private network only)")
	fs.StringVar(&f.engine, "engine", "sqlite", "the database engine of the node: sqlite (embedded) or postgres (a PostgreSQL server the node runs in <data-dir>/pg, or yours with --postgres-dsn; experimental: see README)")
	fs.StringVar(&f.postgresBin, "postgres-bin", "", "directory of PostgreSQL's programs, for --engine postgres: postgres and initdb (15 or later); with --postgres-dsn, pg_dump and pg_restore (the server's version or later) (default: from PATH, else the newest /usr/lib/postgresql/N/bin)")
	fs.StringVar(&f.postgresDSN, "postgres-dsn", "", "with --engine postgres: use this database of a PostgreSQL server you run (15 or later), as a superuser (keyword/value or postgres:// URL; put the password in PGPASSWORD or a password file), instead of a server the node runs; one database per node (see README)")
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
	if f.postgresDSN != "" && f.engine != "postgres" {
		return fmt.Errorf("--postgres-dsn needs --engine postgres (the engine is %s)", f.engine)
	}
	if f.bootstrap && f.join != "" {
		return errors.New("--bootstrap and --join exclude each other: --bootstrap starts a new cluster, --join joins an existing one")
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo})).With("node", f.id)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveNode(ctx, f, logger)
}

// Errors of a node that refuses to start because of what its data
// directory holds.
var (
	errNoState = errors.New("the data directory holds no node state: pass --join <HTTP address of a member> to join a cluster " +
		"(also to bring back a member whose data directory was lost), or --bootstrap to start a new cluster with this node as its first member")
	errHasState = errors.New("the data directory holds the state of a cluster member: --bootstrap is only for the first start of a new cluster; restart without it")
)

// serveNode runs a node until ctx ends, then shuts it down cleanly.
func serveNode(ctx context.Context, f nodeFlags, logger *slog.Logger) error {
	pgCfg, err := clientSecurity(f)
	if err != nil {
		return err
	}
	peer, err := peerSecurity(f) // peersec.go
	if err != nil {
		return err
	}
	var peerServerTLS, peerClientTLS, httpTLS *tls.Config
	if peer != nil {
		peerServerTLS, peerClientTLS, httpTLS = peer.Server(), peer.Client(), peer.ServerPeerOptional()
	}
	pgCfg.Logger = logger
	pgCfg.IdleInTransactionTimeout = f.idleInTxTimeout
	pgCfg.StartupTimeout = f.authTimeout
	pgCfg.MaxConns = f.maxConnections
	if err := pgCfg.Validate(); err != nil {
		return err
	}
	// The data directory is its owner's only (main sets the umask for what
	// is created inside); a node running as root lets the postgres user,
	// who runs its PostgreSQL server, pass through to <data-dir>/pg.
	perm := datadir.Mode
	if f.engine == "postgres" && f.postgresDSN == "" && os.Geteuid() == 0 {
		perm = datadir.PassMode
	}
	changes, err := datadir.Prepare(f.dataDir, perm)
	for _, c := range changes {
		logger.Warn("tightened a mode in the data directory: it let group or others in", "path", c.Path, "was", c.Was, "now", c.Now)
	}
	if err != nil {
		return err
	}
	// Then the lock: a second node on the same directory must fail here,
	// before it opens files that the first one holds (Prepare opens none).
	lock, err := datadir.Acquire(f.dataDir)
	if err != nil {
		return err
	}
	defer lock.Release()
	raftDir := filepath.Join(f.dataDir, "raft")
	if !raftlog.HasState(raftDir) && !f.bootstrap && f.join == "" {
		return fmt.Errorf("%w (%s)", errNoState, f.dataDir)
	}
	eng, err := openEngine(ctx, f, logger)
	if err != nil {
		return fmt.Errorf("open database: %w", err)
	}
	defer eng.Close()

	api := httpapi.NewHandler(logger, httpapi.NewClient(peerClientTLS), peer)
	self := writeset.Member{ID: f.id, PGAddr: f.pgAddr, RaftAddr: f.raftAddr, HTTPAddr: f.httpAddr}
	node, err := replica.New(replica.Config{
		Self:             self,
		CommitTimeout:    f.commitTimeout,
		StatementTimeout: f.statementTimeout,
		MaxWriteSetBytes: int(f.maxWriteSet),
		ReadFilterFPRate: f.readFilterFPRate,
		JoinAddrs:        joinAddrs(f.join),
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
	lg, err := raftlog.Open(raftlog.Config{
		ID: f.id, Dir: raftDir, RaftAddr: f.raftAddr,
		Bootstrap:         f.bootstrap,
		RequireState:      !f.bootstrap && f.join == "",
		SnapshotThreshold: f.snapshotEntries,
		SnapshotInterval:  f.snapshotInterval,
		TrailingLogs:      f.trailingEntries,
		SegmentBytes:      f.logSegmentBytes,
		ServerTLS:         peerServerTLS,
		ClientTLS:         peerClientTLS,
		Logger:            logger,
	}, node.StateMachine())
	switch {
	case errors.Is(err, raftlog.ErrNoState):
		return fmt.Errorf("%w (%s)", errNoState, f.dataDir)
	case errors.Is(err, raftlog.ErrHasState):
		return fmt.Errorf("%w (%s)", errHasState, f.dataDir)
	case err != nil:
		return err
	}
	defer lg.Close()
	resumed := lg.Resumed()
	if resumed && f.join != "" {
		logger.Info("resuming from the data directory: --join only serves to have the cluster update a changed Raft address", "dir", f.dataDir)
	}
	node.Start(lg, httpapi.NewClient(peerClientTLS))
	defer node.Close()
	api.SetNode(node)

	httpLn, err := net.Listen("tcp", f.httpAddr)
	if err != nil {
		return fmt.Errorf("listen for HTTP: %w", err)
	}
	if httpTLS != nil {
		httpLn = tls.NewListener(httpLn, httpTLS)
	}
	// Every request is read within bounded time (a forwarded entry's body
	// gets longer: httpapi), and idle connections go.
	httpSrv := &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute}
	go httpSrv.Serve(httpLn)
	defer httpSrv.Close()

	if !resumed && f.join != "" {
		logger.Info("joining cluster", "via", f.join)
		jctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		err := node.JoinVia(jctx, joinAddrs(f.join))
		cancel()
		if err != nil {
			return err
		}
	}

	pgLn, err := net.Listen("tcp", f.pgAddr)
	if err != nil {
		return fmt.Errorf("listen for PostgreSQL clients: %w", err)
	}
	if v, ok := eng.(serverVersioned); ok {
		// Clients (pg_dump) check the version of the server they get.
		if pgCfg.ServerVersion, err = v.ServerVersion(ctx); err != nil {
			return fmt.Errorf("read the PostgreSQL server's version: %w", err)
		}
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
	peerMode := "tls"
	switch {
	case peer == nil && f.insecurePeers:
		peerMode = "insecure"
	case peer == nil:
		peerMode = "loopback"
	}
	logger.Info("node ready", "pg", f.pgAddr, "http", f.httpAddr, "raft", f.raftAddr, "resumed", resumed, "auth", auth, "tls", tlsMode, "peers", peerMode)

	<-ctx.Done()
	logger.Info("shutting down")
	return nil
}

// serverVersioned is an engine that runs a PostgreSQL server of its own,
// whose version clients are told (postgres).
type serverVersioned interface {
	ServerVersion(ctx context.Context) (string, error)
}

// openEngine opens the node's database engine (--engine).
func openEngine(ctx context.Context, f nodeFlags, logger *slog.Logger) (engine.Engine, error) {
	switch f.engine {
	case "sqlite":
		return sqlite.Open(sqlite.Config{
			Path:        filepath.Join(f.dataDir, "data.db"),
			ApplyGrace:  f.applyGrace,
			LockTimeout: f.lockTimeout,
			NodeID:      f.id,
		})
	case "postgres":
		managedDir, secret := filepath.Join(f.dataDir, "pg"), filepath.Join(f.dataDir, "postgres-dsn.secret")
		if f.postgresDSN != "" {
			if _, err := os.Stat(managedDir); err == nil {
				return nil, fmt.Errorf("the data directory's node runs its own PostgreSQL server (%s): it cannot move to --postgres-dsn; start it without, or give the node a new data directory and --join", managedDir)
			}
			return postgres.OpenDSN(ctx, postgres.DSNConfig{
				DSN: f.postgresDSN, SecretFile: secret, BinDir: f.postgresBin, NodeID: f.id, Founder: f.bootstrap, LockTimeout: f.lockTimeout, Logger: logger,
			})
		}
		if _, err := os.Stat(secret); err == nil {
			return nil, fmt.Errorf("the data directory's node uses a PostgreSQL server of --postgres-dsn (%s exists): start it with --postgres-dsn", secret)
		}
		return postgres.OpenManaged(ctx, postgres.ManagedConfig{
			DataDir: filepath.Join(f.dataDir, "pg"), BinDir: f.postgresBin, NodeID: f.id, Founder: f.bootstrap, LockTimeout: f.lockTimeout, Logger: logger,
		})
	}
	return nil, fmt.Errorf("--engine %q: choose sqlite or postgres", f.engine)
}

// joinAddrs splits --join.
func joinAddrs(join string) []string {
	if join == "" {
		return nil
	}
	return strings.Split(join, ",")
}

// backend opens replica sessions for pgwire connections.
type backend struct{ node *replica.Node }

func (b backend) NewSession(ctx context.Context, user, database string, settings [][2]string) (pgwire.Session, error) {
	s := b.node.NewSession()
	s.SetUser(user)
	if err := s.Startup(ctx, settings); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
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
