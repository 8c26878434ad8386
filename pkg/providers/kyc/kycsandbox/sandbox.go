// Package kycsandbox is the simulated identity verifier of sandbox stages, a
// kyc.Verifier deciding by the document's type and the identification
// number. Its records are its own (Store; in DynamoDB, package kycdb).
package kycsandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"payments/pkg/ids"
	"payments/pkg/providers/kyc"
)

// Magic values of the sandbox verifier (the README's table).
const (
	// RejectSuffix ends the identification numbers the sandbox
	// rejects.
	RejectSuffix = "000"
	// RejectReason is why it rejects them.
	RejectReason = "document does not match the identity"
	// UnreadableReason is why it rejects a document it cannot read
	// as an image or a PDF.
	UnreadableReason = "document unreadable"
)

// DocumentReader reads a stored document.
type DocumentReader interface {
	// GetDocument returns the bytes stored under key.
	GetDocument(ctx context.Context, key string) ([]byte, error)
}

// Record is the sandbox verifier's own record of a verification.
type Record struct {
	ID        string
	Reference string
	Status    kyc.Status
	Reason    string
	// Digests are the SHA-256 of each document it read, by side.
	Digests   map[string]string
	CreatedAt time.Time
}

// Store keeps the sandbox verifier's records apart from ours (in
// DynamoDB: package kycdb).
type Store interface {
	// PutVerification records r unless its reference has a record, and
	// returns the record of the reference.
	PutVerification(ctx context.Context, r Record) (Record, error)
}

// Verifier is the simulated verifier. It decides synchronously:
//   - a document that is not a JPEG, PNG or PDF is REJECTED, "document
//     unreadable";
//   - an identification number ending in 000 is REJECTED, "document does
//     not match the identity";
//   - anything else is VERIFIED.
type Verifier struct {
	docs    DocumentReader
	records Store
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

var _ kyc.Verifier = (*Verifier)(nil)

// New returns the sandbox verifier reading documents from docs and
// keeping its records in records.
func New(docs DocumentReader, records Store) *Verifier {
	return &Verifier{docs: docs, records: records, Now: time.Now}
}

// Verify reads every document of r from storage and decides.
func (s *Verifier) Verify(ctx context.Context, r kyc.Request) (kyc.Decision, error) {
	now := s.Now().UTC()
	rec := Record{
		ID: "kyc_" + ids.NewV7(now), Reference: r.Reference, Status: kyc.Verified,
		Digests: map[string]string{}, CreatedAt: now,
	}
	for _, d := range r.Documents {
		b, err := s.docs.GetDocument(ctx, d.Key)
		if err != nil {
			return kyc.Decision{}, fmt.Errorf("%w: sandbox: read %s document: %v", kyc.ErrUnavailable, d.Side, err)
		}
		sum := sha256.Sum256(b)
		rec.Digests[d.Side] = hex.EncodeToString(sum[:])
		if _, ok := kyc.ContentType(b); !ok && rec.Status == kyc.Verified {
			rec.Status, rec.Reason = kyc.Rejected, UnreadableReason
		}
	}
	if rec.Status == kyc.Verified && strings.HasSuffix(r.IdentificationNumber, RejectSuffix) {
		rec.Status, rec.Reason = kyc.Rejected, RejectReason
	}
	rec, err := s.records.PutVerification(ctx, rec)
	if err != nil {
		return kyc.Decision{}, fmt.Errorf("%w: sandbox: %v", kyc.ErrUnavailable, err)
	}
	return kyc.Decision{ID: rec.ID, Status: rec.Status, Reason: rec.Reason}, nil
}
