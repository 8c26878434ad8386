package kycsandbox_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/infra/local/samples"
	"payments/pkg/documents"
	"payments/pkg/providers/kyc"
	"payments/pkg/providers/kyc/kycdb"
	"payments/pkg/providers/kyc/kycsandbox"
	"payments/pkg/store/storetest"
)

var now = time.Date(2026, 3, 1, 9, 30, 0, 456_000_000, time.UTC)

// html is a document that is not one: a sign-in page.
var html = []byte("<!doctype html><html><body>Sign in to see this file.</body></html>")

// jpeg is the start of a JPEG image: its magic number and a JFIF marker.
var jpeg = []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")

// recorder is the sandbox verifier's store that also keeps what each
// PutVerification returned: the record of the reference as stored.
type recorder struct {
	kycsandbox.Store
	mu   sync.Mutex
	puts []kycsandbox.Record
}

// PutVerification stores r through the wrapped store and keeps what it
// returns.
func (r *recorder) PutVerification(ctx context.Context, rec kycsandbox.Record) (kycsandbox.Record, error) {
	got, err := r.Store.PutVerification(ctx, rec)
	if err == nil {
		r.mu.Lock()
		r.puts = append(r.puts, got)
		r.mu.Unlock()
	}
	return got, err
}

// last returns what the last PutVerification returned, and how many there
// were.
func (r *recorder) last() (kycsandbox.Record, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.puts) == 0 {
		return kycsandbox.Record{}, 0
	}
	return r.puts[len(r.puts)-1], len(r.puts)
}

// sandboxEnv is a sandbox verifier on a fresh table, reading the documents
// of a fresh bucket in the S3 emulator, whose clock is now.
type sandboxEnv struct {
	sb      *kycsandbox.Verifier
	docs    *documents.Store
	records *recorder
}

// newSandboxEnv returns a sandboxEnv.
func newSandboxEnv(t *testing.T) *sandboxEnv {
	t.Helper()
	e := &sandboxEnv{
		docs:    documents.New(storetest.S3Client(t), storetest.NewBucket(t)),
		records: &recorder{Store: kycdb.New(storetest.NewDB(t).DB)},
	}
	e.sb = kycsandbox.New(e.docs, e.records)
	e.sb.Now = func() time.Time { return now }
	return e
}

// put stores b as the side of a new customer's document and returns the
// kyc.Document naming it; a nil b is a key where nothing was stored.
func (e *sandboxEnv) put(t *testing.T, side string, b []byte) kyc.Document {
	t.Helper()
	key := "companies/" + uuid.NewString() + "/customers/" + uuid.NewString() + "/id_document_" + side
	if b != nil {
		if err := e.docs.PutDocument(context.Background(), key, "application/octet-stream", b); err != nil {
			t.Fatal(err)
		}
	}
	return kyc.Document{Side: side, Key: key, ContentType: "image/png"}
}

// request returns a verification of a new customer with idNumber and the
// two documents.
func request(idNumber string, front, back kyc.Document) kyc.Request {
	return kyc.Request{
		Reference: uuid.NewString(), FirstName: "Amina", LastName: "Njoya",
		DateOfBirth: time.Date(1990, 4, 12, 0, 0, 0, 0, time.UTC), CountryISOCode: "CM",
		IdentificationNumber: idNumber, DocumentType: "NIN", Documents: []kyc.Document{front, back},
	}
}

// digest returns the hex SHA-256 of b.
func digest(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestSandboxVerify(t *testing.T) {
	ctx := context.Background()
	e := newSandboxEnv(t)
	png, pdf := samples.PNG(), samples.PDF()
	tests := []struct {
		name        string
		idNumber    string
		front, back []byte // nil: nothing stored under the key
		status      kyc.Status
		reason      string
		err         error
	}{
		{name: "PNG and PDF", idNumber: "CM-0001", front: png, back: pdf, status: kyc.Verified},
		{name: "JPEG and PNG", idNumber: "CM-0002", front: jpeg, back: png, status: kyc.Verified},
		{name: "id ending 000", idNumber: "CM-1000", front: png, back: pdf, status: kyc.Rejected, reason: kycsandbox.RejectReason},
		{name: "id of 000 alone", idNumber: "000", front: png, back: pdf, status: kyc.Rejected, reason: kycsandbox.RejectReason},
		{name: "000 not at the end", idNumber: "CM-0001", front: png, back: pdf, status: kyc.Verified},
		{name: "000 at the start", idNumber: "000-123", front: png, back: pdf, status: kyc.Verified},
		{name: "id ending 00", idNumber: "CM-100", front: png, back: pdf, status: kyc.Verified},
		{name: "HTML front", idNumber: "CM-0003", front: html, back: pdf, status: kyc.Rejected, reason: kycsandbox.UnreadableReason},
		{name: "HTML back", idNumber: "CM-0004", front: png, back: html, status: kyc.Rejected, reason: kycsandbox.UnreadableReason},
		{name: "empty front", idNumber: "CM-0005", front: []byte{}, back: pdf, status: kyc.Rejected, reason: kycsandbox.UnreadableReason},
		{name: "HTML and id ending 000", idNumber: "CM-2000", front: html, back: pdf, status: kyc.Rejected, reason: kycsandbox.UnreadableReason},
		{name: "missing front", idNumber: "CM-0006", back: pdf, err: kyc.ErrUnavailable},
		{name: "missing back", idNumber: "CM-0007", front: png, err: kyc.ErrUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request(tt.idNumber, e.put(t, "front", tt.front), e.put(t, "back", tt.back))
			_, before := e.records.last()
			d, err := e.sb.Verify(ctx, req)
			rec, after := e.records.last()
			if tt.err != nil {
				if !errors.Is(err, tt.err) || after != before {
					t.Fatalf("Verify = %+v, %v; want %v and nothing recorded", d, err, tt.err)
				}
				return
			}
			if err != nil || d.Status != tt.status || d.Reason != tt.reason || !strings.HasPrefix(d.ID, "kyc_") {
				t.Fatalf("Verify = %+v, %v; want %s %q", d, err, tt.status, tt.reason)
			}
			want := map[string]string{"front": digest(tt.front), "back": digest(tt.back)}
			if after != before+1 || rec.Reference != req.Reference || rec.ID != d.ID || rec.Status != d.Status ||
				rec.Reason != d.Reason || !rec.CreatedAt.Equal(now) || len(rec.Digests) != 2 ||
				rec.Digests["front"] != want["front"] || rec.Digests["back"] != want["back"] {
				t.Fatalf("recorded %+v, want the decision %+v of %s with digests %v", rec, d, req.Reference, want)
			}
		})
	}
}

// TestSandboxVerifyIsIdempotent: a verification repeated for a reference
// answers the first decision, whatever the repeat carries.
func TestSandboxVerifyIsIdempotent(t *testing.T) {
	ctx := context.Background()
	e := newSandboxEnv(t)
	png, pdf := samples.PNG(), samples.PDF()
	tests := []struct {
		name                    string
		firstID, repeatID       string
		firstFront, repeatFront []byte
		status                  kyc.Status
		reason                  string
	}{
		{"verified, then a rejected id", "CM-0001", "CM-1000", png, png, kyc.Verified, ""},
		{"verified, then an unreadable document", "CM-0002", "CM-0002", png, html, kyc.Verified, ""},
		{"rejected, then a good id", "CM-1000", "CM-0003", png, png, kyc.Rejected, kycsandbox.RejectReason},
		{"unreadable, then good documents", "CM-0004", "CM-0004", html, png, kyc.Rejected, kycsandbox.UnreadableReason},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := request(tt.firstID, e.put(t, "front", tt.firstFront), e.put(t, "back", pdf))
			first, err := e.sb.Verify(ctx, req)
			if err != nil || first.Status != tt.status || first.Reason != tt.reason {
				t.Fatalf("first Verify = %+v, %v; want %s %q", first, err, tt.status, tt.reason)
			}
			firstRecord, _ := e.records.last()
			repeat := request(tt.repeatID, e.put(t, "front", tt.repeatFront), e.put(t, "back", pdf))
			repeat.Reference = req.Reference
			e.sb.Now = func() time.Time { return now.Add(time.Hour) }
			defer func() { e.sb.Now = func() time.Time { return now } }()
			again, err := e.sb.Verify(ctx, repeat)
			if err != nil || again != first {
				t.Fatalf("repeated Verify = %+v, %v; want the first %+v", again, err, first)
			}
			if rec, _ := e.records.last(); rec.ID != firstRecord.ID || !rec.CreatedAt.Equal(now) ||
				rec.Digests["front"] != firstRecord.Digests["front"] {
				t.Fatalf("the repeat's record %+v is not the first %+v", rec, firstRecord)
			}
		})
	}
}
