package kycdb_test

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/providers/kyc"
	"payments/pkg/providers/kyc/kycdb"
	"payments/pkg/providers/kyc/kycsandbox"
	"payments/pkg/store/storetest"
)

// sameRecord reports whether two sandbox records are equal field by field.
func sameRecord(a, b kycsandbox.Record) bool {
	return a.ID == b.ID && a.Reference == b.Reference && a.Status == b.Status && a.Reason == b.Reason &&
		maps.Equal(a.Digests, b.Digests) && a.CreatedAt.Equal(b.CreatedAt)
}

// TestSandboxKYCPutVerificationIsIdempotent: the first verification of a
// reference is the one kept; a later put returns it, whatever it carries.
func TestSandboxKYCPutVerificationIsIdempotent(t *testing.T) {
	ctx := context.Background()
	s := kycdb.New(storetest.NewDB(t).DB)
	at := time.Date(2026, 3, 1, 9, 30, 0, 123_000_000, time.UTC)
	record := func(ref string, status kyc.Status, reason string) kycsandbox.Record {
		return kycsandbox.Record{
			ID: "kyc_" + uuid.NewString(), Reference: ref, Status: status, Reason: reason,
			Digests: map[string]string{"front": uuid.NewString(), "back": uuid.NewString()}, CreatedAt: at,
		}
	}
	tests := []struct {
		name          string
		first, second kyc.Status
		reason        string
	}{
		{"verified then rejected", kyc.Verified, kyc.Rejected, ""},
		{"rejected then verified", kyc.Rejected, kyc.Verified, kycsandbox.RejectReason},
		{"verified twice", kyc.Verified, kyc.Verified, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := uuid.NewString()
			first := record(ref, tt.first, tt.reason)
			got, err := s.PutVerification(ctx, first)
			if err != nil || !sameRecord(got, first) {
				t.Fatalf("first PutVerification = %+v, %v; want %+v", got, err, first)
			}
			second := record(ref, tt.second, kycsandbox.UnreadableReason)
			second.CreatedAt = at.Add(time.Hour)
			got, err = s.PutVerification(ctx, second)
			if err != nil || !sameRecord(got, first) {
				t.Fatalf("second PutVerification = %+v, %v; want the first %+v", got, err, first)
			}
		})
	}
}
