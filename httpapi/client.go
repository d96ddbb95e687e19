package httpapi

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"certa/orderlog"
	"certa/replica"
	"certa/writeset"
)

// Client calls other nodes' HTTP APIs. It implements replica.Peers.
type Client struct {
	http   *http.Client
	scheme string // "https" with peer TLS, else "http"
	rpc    rpcClients
}

var _ replica.Peers = (*Client)(nil)

// NewClient returns a client with keep-alive connections sized for
// forwarding many batches at once. With peerTLS (peertls.Config.Client)
// it speaks HTTPS, presenting the node's certificate and trusting only
// servers with one of the cluster's CA; nil: plain HTTP.
func NewClient(peerTLS *tls.Config) *Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 2 * time.Second}).DialContext,
		TLSClientConfig:     peerTLS,
		TLSHandshakeTimeout: 5 * time.Second,
		MaxIdleConnsPerHost: 16,
		IdleConnTimeout:     time.Minute,
	}
	c := &Client{http: &http.Client{Transport: tr}, scheme: "http", rpc: rpcClients{tls: peerTLS}}
	if peerTLS != nil {
		c.scheme = "https"
	}
	return c
}

// Forward implements replica.Peers.
func (c *Client) Forward(ctx context.Context, addr string, entry []byte) error {
	req, err := http.NewRequestWithContext(ctx, "POST", c.scheme+"://"+addr+"/internal/append", bytes.NewReader(entry))
	if err != nil {
		return err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return fmt.Errorf("%w: %v", orderlog.ErrTimeout, err) // nothing was sent
		}
		return fmt.Errorf("%w: %v", orderlog.ErrUnknownOutcome, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch resp.StatusCode {
	case http.StatusNoContent:
		return nil
	case statusNotLeader:
		return fmt.Errorf("%w: %s", orderlog.ErrNotLeader, strings.TrimSpace(string(msg)))
	case http.StatusRequestEntityTooLarge:
		return fmt.Errorf("%w: %s", orderlog.ErrTooLarge, strings.TrimSpace(string(msg)))
	case http.StatusBadRequest:
		return fmt.Errorf("%w: leader refused the entry: %s", orderlog.ErrTimeout, strings.TrimSpace(string(msg)))
	default:
		return fmt.Errorf("%w: %s", orderlog.ErrUnknownOutcome, strings.TrimSpace(string(msg)))
	}
}

// ReadIndex implements replica.Peers.
func (c *Client) ReadIndex(ctx context.Context, addr string) (term, index uint64, err error) {
	var reply ReadIndexReply
	if err := c.rpc.call(ctx, addr, "ReadIndex", &reply); err != nil {
		return 0, 0, err
	}
	if reply.NotLeader {
		return 0, 0, orderlog.ErrNotLeader
	}
	return reply.Term, reply.Index, nil
}

// Leadership implements replica.Peers.
func (c *Client) Leadership(ctx context.Context, addr string) (uint64, string, error) {
	var reply LeadershipReply
	err := c.rpc.call(ctx, addr, "Leadership", &reply)
	return reply.Term, reply.Leader, err
}

// Outcome implements replica.Peers.
func (c *Client) Outcome(ctx context.Context, addr string, seqno uint64) (uint64, bool, error) {
	resp, err := c.get(ctx, addr, "/internal/outcome?seqno="+strconv.FormatUint(seqno, 10))
	if err != nil {
		return 0, false, err
	}
	defer resp.Body.Close()
	var reply OutcomeReply
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4096)).Decode(&reply); err != nil {
		return 0, false, fmt.Errorf("outcome from %s: %w", addr, err)
	}
	return reply.Applied, reply.Failed, nil
}

// Snapshot implements replica.Peers.
func (c *Client) Snapshot(ctx context.Context, addr string) (io.ReadCloser, error) {
	resp, err := c.get(ctx, addr, "/internal/snapshot")
	if err != nil {
		return nil, err
	}
	return resp.Body, nil
}

// get sends GET path to addr and returns a 200 response.
func (c *Client) get(ctx context.Context, addr, path string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.scheme+"://"+addr+path, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		resp.Body.Close()
		return nil, fmt.Errorf("GET %s from %s: %s: %s", path, addr, resp.Status, strings.TrimSpace(string(msg)))
	}
	return resp, nil
}

// Join implements replica.Peers.
func (c *Client) Join(ctx context.Context, addr string, m writeset.Member) error {
	return c.join(ctx, addr, m, false)
}

func (c *Client) join(ctx context.Context, addr string, m writeset.Member, forwarded bool) error {
	status, msg, err := c.post(ctx, addr, "/join", m, forwarded)
	if err == nil && status != http.StatusNoContent {
		err = fmt.Errorf("join via %s: %d %s: %s", addr, status, http.StatusText(status), msg)
	}
	return err
}

// post sends v as JSON to path on the node at addr (forwarded: passed on
// by a member) and returns the status and the start of the answer.
func (c *Client) post(ctx context.Context, addr, path string, v any, forwarded bool) (int, string, error) {
	body, _ := json.Marshal(v)
	req, err := http.NewRequestWithContext(ctx, "POST", c.scheme+"://"+addr+path, bytes.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if forwarded {
		req.Header.Set("X-Certa-Forwarded", "1")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, strings.TrimSpace(string(msg)), nil
}

// RemoveMember asks the node at addr to remove member id from its cluster.
func (c *Client) RemoveMember(ctx context.Context, addr, id string) error {
	return c.removeMember(ctx, addr, id, false)
}

func (c *Client) removeMember(ctx context.Context, addr, id string, forwarded bool) error {
	status, msg, err := c.post(ctx, addr, "/member/remove", removeRequest{ID: id}, forwarded)
	switch {
	case err != nil:
		return err
	case status == http.StatusNoContent:
		return nil
	case status == http.StatusNotFound:
		return fmt.Errorf("%w: %s", replica.ErrNoMember, msg)
	}
	return fmt.Errorf("remove %s via %s: %d %s: %s", id, addr, status, http.StatusText(status), msg)
}
