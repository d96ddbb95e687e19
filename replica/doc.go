// Package replica is the core of a certa node: the life of a client
// transaction (run locally, capture its write set at COMMIT, submit it to the
// total-order log, wait for its certification), the state machine that
// certifies and applies every committed write set in log order, and the
// read-consistency waits.
//
// The flow of one commit:
//
//	Session.commit → Node.Commit → submitter (batch; append on the leader or
//	forward to it) → log → stateMachine.Apply on every node (certify, apply
//	through the engine) → the origin's waiter wakes with the outcome.
//
// Certification is decided by certify from the log alone, so every node
// reaches the same decision; the certifier's state does not depend on how
// entries are grouped into apply batches.
package replica
