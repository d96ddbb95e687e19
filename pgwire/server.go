package pgwire

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"
)

// ErrServerClosed is returned by Serve after Close.
var ErrServerClosed = errors.New("pgwire: server closed")

// Server accepts PostgreSQL clients on listeners and runs each connection in
// its own goroutine against a Session from its Backend.
type Server struct {
	cfg     Config
	cfgErr  error
	backend Backend
	log     *slog.Logger

	tlsConfig  *tls.Config // cfg.TLS as used for handshakes, or nil
	cancels    cancelRegistry
	mockSecret [32]byte // salts the mock credentials of unknown users

	// ctx is the parent of every connection's context; Close cancels it so
	// that running queries stop and connections know the server is going
	// away (and say so to their clients: 57P01).
	ctx    context.Context
	cancel context.CancelFunc

	mu        sync.Mutex
	closed    bool
	listeners map[net.Listener]struct{}
	conns     map[net.Conn]struct{}
	admitted  int // connections counted against MaxConns
	rejecting int // connections being told 53300
	wg        sync.WaitGroup
}

// NewServer returns a server that opens sessions on b. Zero fields of cfg
// take their defaults; if cfg is invalid (see Config.Validate), Serve returns
// the error.
func NewServer(cfg Config, b Backend) *Server {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		cfg:       cfg,
		cfgErr:    cfg.Validate(),
		backend:   b,
		log:       cfg.Logger,
		tlsConfig: serverTLSConfig(cfg.TLS),
		ctx:       ctx,
		cancel:    cancel,
		listeners: make(map[net.Listener]struct{}),
		conns:     make(map[net.Conn]struct{}),
	}
	rand.Read(s.mockSecret[:]) // never fails (crypto/rand panics instead)
	return s
}

// Serve accepts connections on ln until ln is closed or Close is called,
// and closes ln when it returns. After Close it returns ErrServerClosed;
// otherwise the error that stopped accepting. Serve may be called for
// several listeners at once.
func (s *Server) Serve(ln net.Listener) error {
	if s.cfgErr != nil {
		ln.Close()
		return s.cfgErr
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.listeners[ln] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.listeners, ln)
		s.mu.Unlock()
		ln.Close()
	}()

	var backoff time.Duration
	for {
		conn, err := ln.Accept()
		if err != nil {
			if s.isClosed() {
				return ErrServerClosed
			}
			// Out of file descriptors and the like: wait and retry as
			// net/http does, rather than spin or give up on all clients.
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() || isTemporary(err) {
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("pgwire: accept failed; retrying", "err", err, "in", backoff)
				select {
				case <-time.After(backoff):
					continue
				case <-s.ctx.Done():
					return ErrServerClosed
				}
			}
			return err
		}
		backoff = 0
		s.start(conn)
	}
}

// isTemporary reports errors that net/http also retries Accept on.
func isTemporary(err error) bool {
	var t interface{ Temporary() bool }
	return errors.As(err, &t) && t.Temporary()
}

// start registers conn and runs it in a goroutine. Connections beyond
// MaxConns still get a goroutine, to tell the client why it is refused;
// those are themselves bounded by MaxConns, beyond which a connection is
// dropped without a word rather than let a flood grow goroutines.
func (s *Server) start(conn net.Conn) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		conn.Close()
		return
	}
	reject := s.admitted >= s.cfg.MaxConns
	if reject && s.rejecting >= s.cfg.MaxConns {
		s.mu.Unlock()
		conn.Close()
		return
	}
	if reject {
		s.rejecting++
	} else {
		s.admitted++
	}
	s.conns[conn] = struct{}{}
	s.wg.Add(1)
	s.mu.Unlock()

	go func() {
		defer s.wg.Done()
		defer func() {
			s.mu.Lock()
			delete(s.conns, conn)
			if reject {
				s.rejecting--
			} else {
				s.admitted--
			}
			s.mu.Unlock()
		}()
		s.serveConn(conn, reject)
	}()
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops the server: it closes every listener, tells every client the
// server is shutting down (57P01) and closes its connection, and waits until
// every connection goroutine has ended and closed its session. Running
// queries see their context cancelled; Close waits for them to return.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.wg.Wait()
		return nil
	}
	s.closed = true
	var errs []error
	for ln := range s.listeners {
		if err := ln.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
			errs = append(errs, err)
		}
	}
	// Cancel before touching deadlines: a connection goroutine that moves
	// its own deadline checks the context afterwards (see conn.setDeadline),
	// so one of the two always sees the other.
	s.cancel()
	for conn := range s.conns {
		// Wake blocked reads and writes instead of closing outright, so the
		// connection's goroutine can still say goodbye; it closes the conn.
		if err := conn.SetDeadline(time.Now()); err != nil {
			conn.Close() // no deadlines on this conn: no goodbye either
		}
	}
	s.mu.Unlock()
	s.wg.Wait()
	return errors.Join(errs...)
}
