package pgwire

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/xdg-go/scram"

	"certa/sqlerr"
)

// SQLSTATE of a failed password check (invalid_password).
const codeInvalidPassword = "28P01"

// scramMechanism is the only SASL mechanism offered. SCRAM-SHA-256-PLUS
// (channel binding) is not: clients then send the "y" or "n" flag, which
// the exchange checks, so a man in the middle cannot strip it either.
const scramMechanism = "SCRAM-SHA-256"

// authenticate runs SCRAM-SHA-256 for user if the server has users
// configured, and accepts everyone otherwise (trust). It reports whether
// the client proved its password; if not, it has told the client why.
func (c *conn) authenticate(user string) bool {
	lookup := c.s.cfg.Credentials
	if lookup == nil {
		return true
	}
	ok := c.scram(user, lookup)
	if ok {
		c.s.loginSucceeded(c.host)
	}
	return ok
}

// scram runs the SCRAM-SHA-256 exchange for user.
func (c *conn) scram(user string, lookup func(string) (SCRAMCredential, bool)) bool {
	cred, known := lookup(user)
	if !known {
		// As PostgreSQL: run the whole exchange with a made-up credential
		// and fail at the proof, so that a client cannot tell unknown
		// users from wrong passwords.
		cred = c.s.mockCredential(user)
	}
	server, err := scram.SHA256.NewServer(func(string) (scram.StoredCredentials, error) {
		// The SCRAM user name is ignored, as in PostgreSQL (libpq sends an
		// empty one): the startup packet names the user.
		return scram.StoredCredentials{
			KeyFactors: scram.KeyFactors{Salt: string(cred.Salt), Iters: cred.Iterations},
			StoredKey:  cred.StoredKey,
			ServerKey:  cred.ServerKey,
		}, nil
	})
	if err != nil {
		c.sendError("FATAL", sqlerr.Wrap(err, sqlerr.Internal, "SCRAM authentication unavailable"))
		return false
	}
	conv := server.NewConversation()
	defer c.be.SetAuthType(pgproto3.AuthTypeOk)

	// Client-first message.
	c.send(&pgproto3.AuthenticationSASL{AuthMechanisms: []string{scramMechanism}})
	c.be.SetAuthType(pgproto3.AuthTypeSASL)
	msg, ok := c.receiveAuth()
	if !ok {
		return false
	}
	first, isFirst := msg.(*pgproto3.SASLInitialResponse)
	if !isFirst {
		return c.authProtocolError("expected SASL response, got "+typeName(msg), nil)
	}
	if first.AuthMechanism != scramMechanism {
		return c.authProtocolError("client selected an invalid SASL authentication mechanism",
			fmt.Errorf("only %s is offered, not %q", scramMechanism, first.AuthMechanism))
	}
	out, err := conv.Step(string(first.Data))
	if err != nil {
		return c.authProtocolError("malformed SCRAM message", err)
	}

	// Client-final message, with the proof.
	c.send(&pgproto3.AuthenticationSASLContinue{Data: []byte(out)})
	c.be.SetAuthType(pgproto3.AuthTypeSASLContinue)
	if msg, ok = c.receiveAuth(); !ok {
		return false
	}
	final, isFinal := msg.(*pgproto3.SASLResponse)
	if !isFinal {
		return c.authProtocolError("expected SASL response, got "+typeName(msg), nil)
	}
	out, err = conv.Step(string(final.Data))
	if out == scram.ErrInvalidProof {
		delay := c.s.loginFailed(c.host) // slows this address's guessing (admission.go)
		c.log.Info("pgwire: password authentication failed", "user", user, "known_user", known, "delay", delay)
		select {
		case <-time.After(delay):
		case <-c.ctx.Done():
		}
		c.sendError("FATAL", sqlerr.New(codeInvalidPassword, "password authentication failed for user %q", user))
		return false
	}
	if err != nil || !conv.Valid() {
		if err == nil {
			err = errors.New("exchange incomplete")
		}
		return c.authProtocolError("malformed SCRAM message", err)
	}
	c.send(&pgproto3.AuthenticationSASLFinal{Data: []byte(out)})
	return true
}

// receiveAuth reads the client's next authentication message. A client
// that hangs up instead (libpq does when it has no password) or sends
// Terminate ends the connection quietly.
func (c *conn) receiveAuth() (pgproto3.FrontendMessage, bool) {
	msg, err := c.be.Receive()
	if err != nil {
		c.receiveFailed(err, "authentication message")
		return nil, false
	}
	if _, ok := msg.(*pgproto3.Terminate); ok {
		return nil, false
	}
	return msg, true
}

// authProtocolError ends an authentication exchange the client got wrong;
// detail, if not nil, says what was wrong.
func (c *conn) authProtocolError(msg string, detail error) bool {
	e := &sqlerr.Error{Code: sqlerr.ProtocolViolation, Message: msg, Err: detail}
	if detail != nil {
		e.Detail = detail.Error()
	}
	c.log.Warn("pgwire: authentication failed", "err", e)
	c.sendError("FATAL", e)
	c.linger = true
	return false
}

// mockCredential returns the credential used for a user that does not
// exist. Its salt depends only on the user name and a secret of this
// server, so that asking twice gives the same salt, as for a real user;
// its keys match no password.
func (s *Server) mockCredential(user string) SCRAMCredential {
	mac := hmac.New(sha256.New, s.mockSecret[:])
	mac.Write([]byte(user))
	key := make([]byte, sha256.Size)
	rand.Read(key) // never fails (crypto/rand panics instead)
	return SCRAMCredential{
		Salt:       mac.Sum(nil)[:scramSaltLen],
		Iterations: DefaultSCRAMIterations,
		StoredKey:  key,
		ServerKey:  key,
	}
}
