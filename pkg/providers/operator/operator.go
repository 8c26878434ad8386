// Package operator is the gateway to mobile-money operators: submit a
// disbursement (payout) or a collection, then ask for its status, by the
// operator's order id or by our own reference.
//
// This package is the contract alone: the interfaces, their requests,
// results and errors, and None. Gateway is what an aggregator adapter
// implements: pawaPay's (pawapay), and the simulated operator of sandbox
// stages and tests (operatorsandbox), which keeps its own orders, apart
// from our records, as a remote system would, and decides deterministically
// by the phone number (the README's table).
package operator

import (
	"context"
	"encoding/json"
	"errors"
)

// Kind tells a disbursement from a collection.
type Kind string

// Kinds of operator requests.
const (
	Payout     Kind = "PAYOUT"
	Collection Kind = "COLLECTION"
)

// State is an operator's view of a request.
type State string

// States an operator reports.
const (
	Processing State = "PROCESSING"
	Succeeded  State = "SUCCESS"
	Failed     State = "FAILED"
)

// Final reports whether s is definitive: Succeeded or Failed.
func (s State) Final() bool { return s == Succeeded || s == Failed }

// ErrUnavailable reports an operator that could not be reached or answered
// with a transient error; the caller retries later. It says nothing about
// the request's outcome.
var ErrUnavailable = errors.New("operator: unavailable")

// ErrNotFound reports a reference or order the operator does not know. It
// is not a failure of the request: a submission may still be on its way.
var ErrNotFound = errors.New("operator: no such request")

// Request is one disbursement or collection to submit.
type Request struct {
	Kind          Kind
	TransactionID string // our payment transaction id, sent as the merchant reference
	CompanyID     string // whose payment it is, echoed back by an aggregator's callback
	Operator      string
	Country       string
	PhoneNumber   string
	Amount        int64 // minor units
	Currency      string
}

// Result is the operator's answer to a submit or a status query.
type Result struct {
	OrderID string // the operator's reference for the request
	State   State
	Reason  string          // why, when State is Failed
	Raw     json.RawMessage // the operator's payload as received
}

// Gateway submits requests to an operator and reports their status.
// Submit must be idempotent on Request.TransactionID: submitting the same
// transaction again returns the first submission's order. A Result whose
// State is Succeeded or Failed is definitive; an error never is.
type Gateway interface {
	Submit(ctx context.Context, r Request) (Result, error)
	// Status reports on an order of kind k made by Submit.
	Status(ctx context.Context, k Kind, orderID string) (Result, error)
	// Lookup finds the request of kind k submitted with our reference
	// (the transaction id), so that a submission whose answer was lost is
	// found; ErrNotFound when the operator has none.
	Lookup(ctx context.Context, k Kind, reference string) (Result, error)
}

// Callback is an operator's final answer about one request, pushed to us
// rather than asked for, once its signature is verified.
type Callback struct {
	Kind Kind
	// Reference is our transaction id, the request's id at the operator.
	Reference string
	// CompanyID is the company the request was submitted for, as we sent
	// it with the request.
	CompanyID string
	Result    Result
}

// ErrCallbackSignature is a callback whose signature is missing, does not
// verify with the operator's key, or is stale: nothing of it is trusted.
var ErrCallbackSignature = errors.New("operator: callback signature missing, invalid or stale")

// ErrCallbackMalformed is a callback, correctly signed, whose body is not
// a final answer about a request we could have made.
var ErrCallbackMalformed = errors.New("operator: malformed callback")
