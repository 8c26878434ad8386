// Package kyc is the gateway to the identity (KYC) verifier that checks a
// customer's identity document against the identity they declared.
//
// This package is the contract alone: the interface, its request, decision
// and errors, and None. Verifier is what a provider adapter implements; the
// simulated verifier of sandbox stages and tests (kycsandbox) reads the
// documents from our document storage, as a provider given access to it
// would, keeps its own record of each verification apart from ours, and
// decides deterministically from the identification number (the README's
// table).
package kyc

import (
	"context"
	"errors"
	"net/http"
	"time"
)

// Status is where a customer stands in identity verification.
type Status string

// Statuses of a verification. Only VERIFIED customers can be issued cards.
const (
	// Pending is a verification the provider has not decided yet.
	Pending Status = "PENDING"
	// Verified is a document that matches the declared identity.
	Verified Status = "VERIFIED"
	// Rejected is a document that does not; Decision.Reason says why.
	Rejected Status = "REJECTED"
)

// ErrUnavailable is a verifier that could not be reached or answered with
// a transient error: nothing was decided.
var ErrUnavailable = errors.New("kyc: verifier unavailable")

// Document is one identity document as stored by us: the verifier reads it
// by Key from document storage, never from the URL it came from.
type Document struct {
	// Side is "front" or "back".
	Side        string
	Key         string
	ContentType string
}

// Request asks for one customer's identity to be verified.
type Request struct {
	// Reference is our customer id; a verification is idempotent on it.
	Reference            string
	FirstName, LastName  string
	DateOfBirth          time.Time
	CountryISOCode       string
	IdentificationNumber string
	DocumentType         string
	Documents            []Document
}

// Decision is the verifier's answer.
type Decision struct {
	// ID is the verifier's id of the verification.
	ID     string
	Status Status
	// Reason says why a verification was rejected; empty otherwise.
	Reason string
}

// Verifier verifies identities.
type Verifier interface {
	// Verify decides on r, or returns the decision already made for
	// r.Reference.
	Verify(ctx context.Context, r Request) (Decision, error)
}

// ContentType returns the type of an identity document by its content, not
// by what its sender claimed: "image/jpeg", "image/png" or
// "application/pdf", and false for anything else (the only types a
// verifier reads).
func ContentType(b []byte) (string, bool) {
	switch t := http.DetectContentType(b); t {
	case "image/jpeg", "image/png", "application/pdf":
		return t, true
	}
	return "", false
}
