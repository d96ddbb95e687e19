package raftlog

import (
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
)

// Deadlines of Raft's requests. hashicorp/raft's TCP transport gives every
// request one I/O deadline. A short one lets a leader notice soon that a
// follower is gone, but an append request that carries a large write set
// (up to orderlog.MaxEntryBytes) can take longer than that to send, decode
// and write to disk on a busy node: measured on two shared cores, a 46 MB
// entry timed out at 5s, was sent again from the start, timed out again,
// and every commit behind it in the log waited for 20 s. Append requests
// over bulkRequestBytes therefore go through a second transport whose
// deadline is bulkTimeout.
const (
	requestTimeout   = 5 * time.Second
	bulkTimeout      = 60 * time.Second
	bulkRequestBytes = 1 << 20
)

// transport is Raft's transport: the TCP transport, which also serves the
// requests of other nodes, and for large append requests a dial-only copy
// of it with a longer deadline.
type transport struct {
	*raft.NetworkTransport
	bulk *raft.NetworkTransport
}

// newTransport listens on bind. With serverTLS (and clientTLS to dial) the
// transport speaks mutual TLS (package peertls makes the configs): a
// connection without a certificate of the cluster's CA fails its handshake
// before Raft reads a byte of it.
func newTransport(bind string, advertise net.Addr, logger hclog.Logger, serverTLS, clientTLS *tls.Config) (*transport, error) {
	cfg := func(stream raft.StreamLayer, timeout time.Duration, pool int) *raft.NetworkTransportConfig {
		return &raft.NetworkTransportConfig{Stream: stream, MaxPool: pool, Timeout: timeout, Logger: logger, MaxRPCsInFlight: 1}
	}
	var main *raft.NetworkTransport
	if serverTLS == nil {
		var err error
		main, err = raft.NewTCPTransportWithConfig(bind, advertise, cfg(nil, requestTimeout, 5))
		if err != nil {
			return nil, err
		}
	} else {
		ln, err := tls.Listen("tcp", bind, serverTLS)
		if err != nil {
			return nil, err
		}
		main = raft.NewNetworkTransportWithConfig(cfg(newTLSStream(ln, advertise, clientTLS), requestTimeout, 5))
	}
	bulk := raft.NewNetworkTransportWithConfig(cfg(newDialOnly(advertise, clientTLS), bulkTimeout, 2))
	return &transport{NetworkTransport: main, bulk: bulk}, nil
}

// Handshakes on the Raft port: each must finish within handshakeTimeout,
// and at most maxHandshakes run at once (further connections wait to be
// accepted), so that connections that never finish theirs cannot hold a
// node's memory or keep its peers out for long.
const (
	handshakeTimeout = 5 * time.Second
	maxHandshakes    = 64
)

// tlsStream is a raft.StreamLayer over mutual TLS. It hands Raft only
// connections whose handshake succeeded: those of the cluster's nodes.
type tlsStream struct {
	net.Listener // a tls.Listener
	advertise    net.Addr
	client       *tls.Config
	ready        chan net.Conn
	closed       chan struct{}
	once         sync.Once
}

func newTLSStream(ln net.Listener, advertise net.Addr, client *tls.Config) *tlsStream {
	s := &tlsStream{Listener: ln, advertise: advertise, client: client, ready: make(chan net.Conn), closed: make(chan struct{})}
	go s.acceptLoop()
	return s
}

func (s *tlsStream) acceptLoop() {
	slots := make(chan struct{}, maxHandshakes)
	for {
		conn, err := s.Listener.Accept()
		if err != nil {
			select {
			case <-s.closed:
				return
			default:
			}
			time.Sleep(10 * time.Millisecond) // transient (e.g. out of file descriptors)
			continue
		}
		select {
		case slots <- struct{}{}:
		case <-s.closed:
			conn.Close()
			return
		}
		go func() {
			defer func() { <-slots }()
			tc := conn.(*tls.Conn)
			tc.SetDeadline(time.Now().Add(handshakeTimeout))
			if err := tc.Handshake(); err != nil {
				conn.Close()
				return
			}
			tc.SetDeadline(time.Time{})
			select {
			case s.ready <- conn:
			case <-s.closed:
				conn.Close()
			}
		}()
	}
}

// Accept returns the next connection whose handshake succeeded.
func (s *tlsStream) Accept() (net.Conn, error) {
	select {
	case conn := <-s.ready:
		return conn, nil
	case <-s.closed:
		return nil, net.ErrClosed
	}
}

func (s *tlsStream) Close() error {
	s.once.Do(func() { close(s.closed) })
	return s.Listener.Close()
}

func (s *tlsStream) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return dial(string(address), timeout, s.client)
}

func (s *tlsStream) Addr() net.Addr { return s.advertise }

// dial connects to a peer's Raft port, over TLS with client set.
func dial(address string, timeout time.Duration, client *tls.Config) (net.Conn, error) {
	if client == nil {
		return net.DialTimeout("tcp", address, timeout)
	}
	return tls.DialWithDialer(&net.Dialer{Timeout: timeout}, "tcp", address, client)
}

// AppendEntries sends large requests through the bulk transport.
func (t *transport) AppendEntries(id raft.ServerID, target raft.ServerAddress, args *raft.AppendEntriesRequest, resp *raft.AppendEntriesResponse) error {
	size := 0
	for _, e := range args.Entries {
		size += len(e.Data) + len(e.Extensions)
	}
	if size > bulkRequestBytes {
		return t.bulk.AppendEntries(id, target, args, resp)
	}
	return t.NetworkTransport.AppendEntries(id, target, args, resp)
}

// Close closes both transports.
func (t *transport) Close() error {
	t.bulk.Close()
	return t.NetworkTransport.Close()
}

// dialOnly is a raft.StreamLayer that dials but accepts nothing: the
// requests of other nodes come in through the main transport.
type dialOnly struct {
	addr   net.Addr
	client *tls.Config // nil: plain TCP
	closed chan struct{}
	once   sync.Once
}

func newDialOnly(addr net.Addr, client *tls.Config) *dialOnly {
	return &dialOnly{addr: addr, client: client, closed: make(chan struct{})}
}

func (d *dialOnly) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return dial(string(address), timeout, d.client)
}

func (d *dialOnly) Accept() (net.Conn, error) {
	<-d.closed
	return nil, errors.New("raftlog: the bulk transport accepts no connections")
}

func (d *dialOnly) Close() error {
	d.once.Do(func() { close(d.closed) })
	return nil
}

func (d *dialOnly) Addr() net.Addr { return d.addr }
