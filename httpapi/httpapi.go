// Package httpapi is a node's HTTP face: GET /status (JSON), GET /metrics
// (Prometheus), POST /join, and the internal endpoints other nodes use to
// forward write sets to the leader and to ask it for a sync point. It also
// holds the client side of those internal calls. It is the only package of
// ours that imports the Prometheus client.
package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"certa/engine"
	"certa/orderlog"
	"certa/peertls"
	"certa/replica"
	"certa/writeset"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/sync/semaphore"
)

// Node is what the HTTP API serves.
type Node interface {
	Status() replica.Status
	// Join adds a member; orderlog.ErrNotLeader when this node is not the leader.
	Join(m writeset.Member) error
	// RemoveMember removes a member (replica.ErrNoMember if there is no
	// such member); orderlog.ErrNotLeader when this node is not the leader.
	RemoveMember(id string) error
	// AppendForwarded appends an entry forwarded by a follower (leader only).
	AppendForwarded(entry []byte) error
	// LeaderReadIndex returns the leader's term and commit index (leader
	// only: orderlog.ErrNotLeader).
	LeaderReadIndex() (term, index uint64, err error)
	// Leadership returns the node's term and the leader it knows in it.
	Leadership() (term uint64, leader string)
	// LeaderHTTPAddr returns the leader's HTTP address if known.
	LeaderHTTPAddr() (string, bool)
	// Checksums summarises the node's data at its applied seqno.
	Checksums(ctx context.Context) (engine.Checksums, error)
	// Outcome says how the write set at seqno went on this node.
	Outcome(seqno uint64) (applied uint64, failed bool, err error)
	// OpenSnapshot opens the node's state for another node to take.
	OpenSnapshot() (io.ReadCloser, error)
}

// maxEntryBytes bounds a forwarded entry: no log entry is larger.
const maxEntryBytes = orderlog.MaxEntryBytes

// Handler returns the HTTP handler for node, with metrics registered in a
// new registry. ObserveCommit must be given to replica.Config.ObserveCommit
// so the commit-latency histogram is filled.
type Handler struct {
	node     Node
	mux      *http.ServeMux
	latency  prometheus.Histogram
	registry *prometheus.Registry
	client   *Client
	peer     *peertls.Config // nil: peers are not authenticated
	log      *slog.Logger
	// appendBudget bounds the bytes of forwarded entries in flight.
	appendBudget *semaphore.Weighted
}

// NewHandler builds the handler. node may be set later with SetNode (the
// node needs the handler's latency observer before it exists). client
// passes on joins to the leader. With peer TLS, everything but /status and
// /metrics answers only requests that came with a certificate of the
// cluster's CA (403 otherwise); with a nil peer, everything answers
// everyone, which only a node on loopback addresses or started with
// --insecure-peers does.
func NewHandler(log *slog.Logger, client *Client, peer *peertls.Config) *Handler {
	h := &Handler{mux: http.NewServeMux(), registry: prometheus.NewRegistry(), client: client, peer: peer, log: log,
		appendBudget: semaphore.NewWeighted(appendBudgetBytes)}
	h.latency = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "certa_commit_latency_seconds",
		Help:    "Time from submitting a write set to its commit being applied on this node.",
		Buckets: prometheus.ExponentialBuckets(0.0002, 2, 16),
	})
	h.registry.MustRegister(h.latency)
	h.mux.HandleFunc("GET /status", h.status)
	h.mux.Handle("GET /metrics", promhttp.HandlerFor(h.registry, promhttp.HandlerOpts{}))
	peerOnly := func(pattern string, f http.Handler) { h.mux.Handle(pattern, peer.RequirePeer(f)) }
	peerOnly("GET /checksum", http.HandlerFunc(h.checksum))
	peerOnly("POST /join", http.HandlerFunc(h.join))
	peerOnly("POST /member/remove", http.HandlerFunc(h.removeMember))
	peerOnly("POST /internal/append", http.HandlerFunc(h.appendEntry))
	peerOnly("GET /internal/outcome", http.HandlerFunc(h.outcome))
	peerOnly("GET /internal/snapshot", http.HandlerFunc(h.snapshot))
	peerOnly("CONNECT "+rpcPath, newRPCServer(h))
	// Go's profiler, for diagnosing a slow node in place.
	peerOnly("GET /debug/pprof/", http.HandlerFunc(pprof.Index))
	peerOnly("GET /debug/pprof/profile", http.HandlerFunc(pprof.Profile))
	peerOnly("GET /debug/pprof/trace", http.HandlerFunc(pprof.Trace))
	return h
}

// SetNode sets the node served and registers its gauges.
func (h *Handler) SetNode(n Node) {
	h.node = n
	gauge := func(name, help string, f func(replica.Status) float64) {
		h.registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
			func() float64 { return f(n.Status()) }))
	}
	counter := func(name, help string, f func(replica.Status) float64) {
		h.registry.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return f(n.Status()) }))
	}
	gauge("certa_applied_seqno", "Last log position certified and applied on this node.", func(s replica.Status) float64 { return float64(s.AppliedSeqno) })
	gauge("certa_commit_seqno", "Position of the last write set that passed certification.", func(s replica.Status) float64 { return float64(s.CommitSeqno) })
	counter("certa_certified_total", "Write sets that passed certification on this node since start.", func(s replica.Status) float64 { return float64(s.Certified) })
	counter("certa_conflicts_total", "Write sets that failed certification on this node since start.", func(s replica.Status) float64 { return float64(s.Conflicts) })
	counter("certa_unforeseen_conflicts_total", "Certified write sets that did not match this node's rows at apply since start (should stay 0: compare the nodes' checksums).",
		func(s replica.Status) float64 { return float64(s.UnforeseenConflicts) })
	counter("certa_read_sets_total", "Serializable write sets this node's clients submitted, each with what its transaction read.",
		func(s replica.Status) float64 { return float64(s.ReadSets) })
	counter("certa_read_set_bytes_total", "Bytes the reads of those write sets took (divide by certa_read_sets_total for bytes per commit).",
		func(s replica.Status) float64 { return float64(s.ReadSetBytes) })
	counter("certa_read_filter_false_positives_total", "Serializable commits from this node that failed only because the Bloom filter of their keys read matched a row they did not read.",
		func(s replica.Status) float64 { return float64(s.ReadFilterFalsePositives) })
	counter("certa_resyncs_total", "State transfers this node made since start because a write set failed here that applied on another node (its data differed: should stay 0).",
		func(s replica.Status) float64 { return float64(s.Resyncs) })
	gauge("certa_is_leader", "1 if this node is the Raft leader.", func(s replica.Status) float64 {
		if s.Role == "leader" {
			return 1
		}
		return 0
	})
	gauge("certa_connected", "1 if this node knows a leader; 0 if it is cut off from its cluster (see cut_off in /status).", func(s replica.Status) float64 {
		if s.Connected {
			return 1
		}
		return 0
	})
	gauge("certa_log_commit_index", "Raft commit index known to this node.", func(s replica.Status) float64 { return float64(s.LogCommitIndex) })
	gauge("certa_log_apply_lag", "Committed log entries not yet applied on this node.", func(s replica.Status) float64 {
		if s.LogCommitIndex > s.LogAppliedIndex {
			return float64(s.LogCommitIndex - s.LogAppliedIndex)
		}
		return 0
	})
	gauge("certa_members", "Members in the cluster configuration.", func(s replica.Status) float64 { return float64(len(s.Members)) })
}

// ObserveCommit records one commit's latency.
func (h *Handler) ObserveCommit(d time.Duration) { h.latency.Observe(d.Seconds()) }

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.node == nil {
		http.Error(w, "node starting", http.StatusServiceUnavailable)
		return
	}
	h.mux.ServeHTTP(w, r)
}

func (h *Handler) status(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(h.node.Status())
}

// checksumResponse is GET /checksum's answer.
type checksumResponse struct {
	ID string `json:"id"`
	engine.Checksums
}

func (h *Handler) checksum(w http.ResponseWriter, r *http.Request) {
	sums, err := h.node.Checksums(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.Encode(checksumResponse{ID: h.node.Status().ID, Checksums: sums})
}

// OutcomeReply answers GET /internal/outcome?seqno=N (Node.Outcome).
type OutcomeReply struct {
	Applied uint64 `json:"applied"`
	Failed  bool   `json:"failed"`
}

func (h *Handler) outcome(w http.ResponseWriter, r *http.Request) {
	seqno, err := strconv.ParseUint(r.URL.Query().Get("seqno"), 10, 64)
	if err != nil {
		http.Error(w, "seqno must be a number", http.StatusBadRequest)
		return
	}
	var reply OutcomeReply
	reply.Applied, reply.Failed, err = h.node.Outcome(seqno)
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(reply)
}

// snapshot streams the node's state (GET /internal/snapshot) to a node
// that must take it.
func (h *Handler) snapshot(w http.ResponseWriter, r *http.Request) {
	rc, err := h.node.OpenSnapshot()
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	defer rc.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	if _, err := io.Copy(w, rc); err != nil {
		h.log.Warn("sending this node's state to another node failed", "err", err)
	}
}

// Status codes of the internal protocol.
const (
	statusNotLeader = http.StatusMisdirectedRequest // 421: not the leader; nothing was appended
	statusUnknown   = http.StatusServiceUnavailable // 503: outcome unknown
)

func (h *Handler) join(w http.ResponseWriter, r *http.Request) {
	var m writeset.Member
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<16)).Decode(&m); err != nil {
		http.Error(w, "bad join request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if msg := h.joinRefusal(r, m); msg != "" {
		http.Error(w, msg, http.StatusForbidden)
		return
	}
	err := h.node.Join(m)
	if errors.Is(err, orderlog.ErrNotLeader) {
		// Pass the request on to the leader, so a joiner may name any member.
		addr, ok := h.node.LeaderHTTPAddr()
		if !ok || r.Header.Get("X-Certa-Forwarded") != "" {
			http.Error(w, "no leader known", statusNotLeader)
			return
		}
		err = h.client.join(r.Context(), addr, m, true)
	}
	if err != nil {
		http.Error(w, err.Error(), statusUnknown)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// removeRequest is POST /member/remove's body.
type removeRequest struct {
	ID string `json:"id"`
}

// removeMember removes a member, on the leader (a follower passes the
// request on). With peer TLS only a node's certificate may ask (peerOnly).
func (h *Handler) removeMember(w http.ResponseWriter, r *http.Request) {
	var req removeRequest
	if err := json.NewDecoder(io.LimitReader(r.Body, 1<<12)).Decode(&req); err != nil || req.ID == "" {
		http.Error(w, "bad request: want {\"id\": \"<member id>\"}", http.StatusBadRequest)
		return
	}
	err := h.node.RemoveMember(req.ID)
	if errors.Is(err, orderlog.ErrNotLeader) {
		addr, ok := h.node.LeaderHTTPAddr()
		if !ok || r.Header.Get("X-Certa-Forwarded") != "" {
			http.Error(w, "no leader known", statusNotLeader)
			return
		}
		err = h.client.removeMember(r.Context(), addr, req.ID, true)
	}
	switch {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.Is(err, replica.ErrNoMember):
		http.Error(w, err.Error(), http.StatusNotFound)
	default:
		http.Error(w, err.Error(), statusUnknown)
	}
}

// joinRefusal says why a join request is refused ("" if it is not). With
// peer TLS a node joins, or updates its addresses, only as itself: the id
// it asks for must be its certificate's. A join passed on by a member
// (X-Certa-Forwarded) was checked by that member, which must be one.
func (h *Handler) joinRefusal(r *http.Request, m writeset.Member) string {
	if h.peer == nil {
		return ""
	}
	id, _ := peertls.PeerID(r.TLS)
	if r.Header.Get("X-Certa-Forwarded") == "" {
		if id != m.ID {
			return fmt.Sprintf("a node may join only as itself: this certificate is node %q's, the request is for %q", id, m.ID)
		}
		return ""
	}
	for _, mb := range h.node.Status().Members {
		if mb.ID == id {
			return ""
		}
	}
	return fmt.Sprintf("a join may be passed on only by a member; %q is none", id)
}

// Bounds of forwarded entries: the bytes of those being read or appended
// at once (more wait for their turn, within their request's lifetime), and
// the time a body may take to arrive.
const (
	appendBudgetBytes = 2 * maxEntryBytes
	appendBodyTimeout = 60 * time.Second
)

func (h *Handler) appendEntry(w http.ResponseWriter, r *http.Request) {
	n := r.ContentLength
	switch {
	case n < 0:
		http.Error(w, "entry without Content-Length", http.StatusLengthRequired)
		return
	case n > maxEntryBytes:
		http.Error(w, fmt.Sprintf("entry larger than the log's limit of %d bytes", maxEntryBytes), http.StatusRequestEntityTooLarge)
		return
	}
	if err := h.appendBudget.Acquire(r.Context(), n); err != nil {
		http.Error(w, "gave up waiting for room to read the entry", statusNotLeader)
		return
	}
	defer h.appendBudget.Release(n)
	http.NewResponseController(w).SetReadDeadline(time.Now().Add(appendBodyTimeout))
	var buf bytes.Buffer
	if r.ContentLength > 0 && r.ContentLength <= maxEntryBytes {
		buf.Grow(int(r.ContentLength) + bytes.MinRead) // one allocation: entries can be tens of MB
	}
	_, err := buf.ReadFrom(io.LimitReader(r.Body, maxEntryBytes+1))
	body := buf.Bytes()
	switch {
	case err != nil:
		http.Error(w, "entry unreadable", http.StatusBadRequest)
		return
	case len(body) > maxEntryBytes:
		http.Error(w, fmt.Sprintf("entry larger than the log's limit of %d bytes", maxEntryBytes), http.StatusRequestEntityTooLarge)
		return
	}
	switch err := h.node.AppendForwarded(body); {
	case err == nil:
		w.WriteHeader(http.StatusNoContent)
	case errors.Is(err, orderlog.ErrTooLarge):
		http.Error(w, err.Error(), http.StatusRequestEntityTooLarge)
	case errors.Is(err, orderlog.ErrNotLeader), errors.Is(err, orderlog.ErrTimeout):
		http.Error(w, err.Error(), statusNotLeader)
	case errors.Is(err, writeset.ErrCorrupt):
		http.Error(w, err.Error(), http.StatusBadRequest)
	default:
		http.Error(w, err.Error(), statusUnknown)
	}
}
