// Package idempotency makes the requests that move money safe to retry:
// a client sends an Idempotency-Key header, and a second request with the
// same key and the same request gets the first response again instead of
// running again. Keys are kept per company for Retention; a request still
// running holds its key for Lease, after which a retry takes it over.
// docs/idempotency.md has the rules.
package idempotency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"time"
)

// Header is the request header that carries the key.
const Header = "Idempotency-Key"

// ReplayedHeader marks a response that was stored for an earlier request
// with the same key and is sent again.
const ReplayedHeader = "Idempotent-Replayed"

// MaxKeyLength is the longest key, in bytes (printable ASCII).
const MaxKeyLength = 255

// Retention is how long a key is kept after the request that claimed it.
const Retention = 24 * time.Hour

// Lease is how long a request still running holds its key: after it, a
// retry of the same request takes the key over and runs the request again,
// so that a function that died mid-request does not leave the key stuck.
// It must be longer than any function serving a wrapped route may run
// (template.yaml: the Globals Timeout, 15 s; the card-network function's
// 29 s), with a margin of 10 s for the clocks of instances.
const Lease = 40 * time.Second

// MaxStoredBody is the largest response body kept, in bytes: a DynamoDB
// item holds at most 400 KB, the key and the other attributes included.
// A larger response is answered once; a replay of it is
// ErrResponseNotStored.
const MaxStoredBody = 350 << 10

// ErrKeyReused is a key sent again with another request: another method,
// path or body (422).
var ErrKeyReused = errors.New("idempotency: key used with a different request")

// ErrKeyInUse is a key whose first request is still running (409, retry
// shortly).
var ErrKeyInUse = errors.New("idempotency: key in use by a request still running")

// ErrResponseNotStored is the replay of a response that was larger than
// MaxStoredBody: the request ran once, its response was not kept.
var ErrResponseNotStored = errors.New("idempotency: the first response was too large to keep")

// ErrLeaseLost is what Store.Complete and Store.Release return when the
// key is no longer held by the claim they name: its lease ended and another
// request took the key over.
var ErrLeaseLost = errors.New("idempotency: the key is no longer held by this request")

// Claim is what a request writes when it takes a key.
type Claim struct {
	// RequestHash identifies the request (RequestHash).
	RequestHash string
	// LeaseID is unique to this claim: only it completes or releases the
	// key.
	LeaseID string
	// Now is the time of the claim; LeaseUntil and ExpiresAt follow from it.
	Now        time.Time
	LeaseUntil time.Time
	ExpiresAt  time.Time
}

// Response is a stored response.
type Response struct {
	Status      int
	ContentType string
	Body        []byte
	// Omitted reports a body larger than MaxStoredBody, not kept.
	Omitted bool
}

// Record is what holds a key.
type Record struct {
	RequestHash string
	LeaseUntil  time.Time
	ExpiresAt   time.Time
	// Effect is what the request committed, recorded in the same
	// transaction as its movement of money; the zero Effect while it has
	// committed nothing.
	Effect Effect
	// Response is the first request's response; nil while it runs.
	Response *Response
}

// Effect is what a request that moves money committed: the id of what it
// created (a payment, a card, a card transaction, a movement between
// wallets, a funding) and, for a movement whose answer holds balances the
// store computed in the transaction, a receipt of that answer, encoded by
// the package that made it.
type Effect struct {
	ID      string
	Receipt []byte
}

// Committed reports whether the effect was recorded.
func (e Effect) Committed() bool { return e.ID != "" }

// Store keeps one record per company and key. Every method is atomic on
// that record.
type Store interface {
	// Claim writes an in-progress record for key from c, unless a live
	// record holds the key; it returns the record it wrote and true, else
	// the live record and false. A record is live until its ExpiresAt; an
	// in-progress record of the same request (c.RequestHash) whose
	// LeaseUntil has passed is not live either: it is taken over, keeping
	// the Effect it recorded, which the record returned carries. Times are
	// compared with c.Now.
	Claim(ctx context.Context, companyID, key string, c Claim) (Record, bool, error)
	// Complete stores resp in the record of the claim leaseID, or returns
	// ErrLeaseLost.
	Complete(ctx context.Context, companyID, key, leaseID string, resp Response) error
	// Release deletes the record of the claim leaseID or, when it holds an
	// Effect, only ends its lease (a retry then answers from the effect);
	// or returns ErrLeaseLost.
	Release(ctx context.Context, companyID, key, leaseID string) error
}

// RequestHash returns the hex SHA-256 of a request: its method, its path
// (so the same key on another route, or on another card, is another
// request) and its body bytes. The query string is not part of it.
func RequestHash(method, path string, body []byte) string {
	h := sha256.New()
	for _, part := range []string{method, path} {
		h.Write([]byte(strconv.Itoa(len(part)) + ":" + part))
	}
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
