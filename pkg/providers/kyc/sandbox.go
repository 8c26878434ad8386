package kyc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"payments/pkg/ids"
)

// Magic values of the sandbox verifier (the README's table).
const (
	// SandboxRejectSuffix ends the identification numbers the sandbox
	// rejects.
	SandboxRejectSuffix = "000"
	// SandboxRejectReason is why it rejects them.
	SandboxRejectReason = "document does not match the identity"
	// SandboxUnreadableReason is why it rejects a document it cannot read
	// as an image or a PDF.
	SandboxUnreadableReason = "document unreadable"
)

// DocumentReader reads a stored document.
type DocumentReader interface {
	// GetDocument returns the bytes stored under key.
	GetDocument(ctx context.Context, key string) ([]byte, error)
}

// SandboxRecord is the sandbox verifier's own record of a verification.
type SandboxRecord struct {
	ID        string
	Reference string
	Status    Status
	Reason    string
	// Digests are the SHA-256 of each document it read, by side.
	Digests   map[string]string
	CreatedAt time.Time
}

// SandboxStore keeps the sandbox verifier's records apart from ours (in
// DynamoDB: package kycdb).
type SandboxStore interface {
	// PutVerification records r unless its reference has a record, and
	// returns the record of the reference.
	PutVerification(ctx context.Context, r SandboxRecord) (SandboxRecord, error)
}

// Sandbox is the simulated verifier. It decides synchronously:
//   - a document that is not a JPEG, PNG or PDF is REJECTED, "document
//     unreadable";
//   - an identification number ending in 000 is REJECTED, "document does
//     not match the identity";
//   - anything else is VERIFIED.
type Sandbox struct {
	docs    DocumentReader
	records SandboxStore
	// Now returns the current time; tests may replace it.
	Now func() time.Time
}

var _ Verifier = (*Sandbox)(nil)

// NewSandbox returns the sandbox verifier reading documents from docs and
// keeping its records in records.
func NewSandbox(docs DocumentReader, records SandboxStore) *Sandbox {
	return &Sandbox{docs: docs, records: records, Now: time.Now}
}

// Verify reads every document of r from storage and decides.
func (s *Sandbox) Verify(ctx context.Context, r Request) (Decision, error) {
	now := s.Now().UTC()
	rec := SandboxRecord{
		ID: "kyc_" + ids.NewV7(now), Reference: r.Reference, Status: Verified,
		Digests: map[string]string{}, CreatedAt: now,
	}
	for _, d := range r.Documents {
		b, err := s.docs.GetDocument(ctx, d.Key)
		if err != nil {
			return Decision{}, fmt.Errorf("%w: sandbox: read %s document: %v", ErrUnavailable, d.Side, err)
		}
		sum := sha256.Sum256(b)
		rec.Digests[d.Side] = hex.EncodeToString(sum[:])
		if _, ok := ContentType(b); !ok && rec.Status == Verified {
			rec.Status, rec.Reason = Rejected, SandboxUnreadableReason
		}
	}
	if rec.Status == Verified && strings.HasSuffix(r.IdentificationNumber, SandboxRejectSuffix) {
		rec.Status, rec.Reason = Rejected, SandboxRejectReason
	}
	rec, err := s.records.PutVerification(ctx, rec)
	if err != nil {
		return Decision{}, fmt.Errorf("%w: sandbox: %v", ErrUnavailable, err)
	}
	return Decision{ID: rec.ID, Status: rec.Status, Reason: rec.Reason}, nil
}
