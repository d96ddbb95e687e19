package raftlog

import (
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

func newTransport(bind string, advertise net.Addr, logger hclog.Logger) (*transport, error) {
	main, err := raft.NewTCPTransportWithConfig(bind, advertise, &raft.NetworkTransportConfig{
		MaxPool: 5, Timeout: requestTimeout, Logger: logger, MaxRPCsInFlight: 1,
	})
	if err != nil {
		return nil, err
	}
	bulk := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
		Stream: newDialOnly(advertise), MaxPool: 2, Timeout: bulkTimeout, Logger: logger, MaxRPCsInFlight: 1,
	})
	return &transport{NetworkTransport: main, bulk: bulk}, nil
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
	closed chan struct{}
	once   sync.Once
}

func newDialOnly(addr net.Addr) *dialOnly { return &dialOnly{addr: addr, closed: make(chan struct{})} }

func (d *dialOnly) Dial(address raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return net.DialTimeout("tcp", string(address), timeout)
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
