// Package vaulttest gives tests a stand-in for AWS KMS: an HTTP server that
// answers GenerateDataKey and Decrypt (the JSON 1.1 protocol, blobs in
// base64) for the keys it holds, and records what it was asked, so that a
// vault.KMS (and the AWS calls of the functions that use it) run as in AWS.
package vaulttest

import (
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"testing"
)

// KeyARN is the key every FakeKMS holds, also known as alias/payments-cards.
const KeyARN = "arn:aws:kms:us-east-1:000000000000:key/11111111-2222-3333-4444-555555555555"

// WebhookKeyARN is the other key every FakeKMS holds, also known as
// alias/payments-webhooks: the webhook signing secrets' (WebhookKey).
const WebhookKeyARN = "arn:aws:kms:us-east-1:000000000000:key/66666666-7777-8888-9999-000000000000"

// FakeKMS is a KMS stand-in. Its "ciphertexts" are random bytes it
// remembers.
type FakeKMS struct {
	// URL is its endpoint (AWS_ENDPOINT_URL_KMS).
	URL string
	// Keys maps a key id or alias to its ARN; an ARN maps to itself.
	Keys map[string]string
	// Disabled is the ARN of a key that answers DisabledException.
	Disabled string

	mu          sync.Mutex
	dataKeySize int                // of the data keys it makes; 0: 32
	keys        map[string]dataKey // ciphertext → data key
	asked       []Request
}

// SetDataKeySize makes the data keys of n bytes from now on (0: 32).
func (f *FakeKMS) SetDataKeySize(n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dataKeySize = n
}

type dataKey struct {
	plain   []byte
	arn     string
	context string // the encryption context it was made for, canonical
}

// Request is the part of a request the fake reads.
type Request struct {
	Target         string `json:"-"`
	KeyId          string //lint:ignore ST1003 the name of KMS's field
	KeySpec        string
	NumberOfBytes  int
	CiphertextBlob []byte
	// EncryptionContext is the request's; KMS decrypts only under the
	// context a data key was made for.
	EncryptionContext map[string]string
}

// NewFakeKMS starts a FakeKMS holding KeyARN and WebhookKeyARN, closed when
// the test ends.
func NewFakeKMS(t testing.TB) *FakeKMS {
	f := &FakeKMS{
		Keys: map[string]string{KeyARN: KeyARN, "alias/payments-cards": KeyARN,
			WebhookKeyARN: WebhookKeyARN, "alias/payments-webhooks": WebhookKeyARN},
		keys: map[string]dataKey{},
	}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

func kmsError(w http.ResponseWriter, kind, message string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"__type": kind, "message": message})
}

// ServeHTTP answers one KMS request.
func (f *FakeKMS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in Request
	if r.Header.Get("Content-Type") != "application/x-amz-json-1.1" || json.NewDecoder(r.Body).Decode(&in) != nil {
		kmsError(w, "ValidationException", "not a JSON 1.1 request")
		return
	}
	in.Target = r.Header.Get("X-Amz-Target")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, in)
	arn, known := f.Keys[in.KeyId]
	switch {
	case in.Target != "TrentService.GenerateDataKey" && in.Target != "TrentService.Decrypt":
		kmsError(w, "UnknownOperationException", "not GenerateDataKey or Decrypt")
		return
	case !known:
		kmsError(w, "NotFoundException", "no such key")
		return
	case arn == f.Disabled:
		kmsError(w, "DisabledException", arn+" is disabled.")
		return
	}
	var out map[string]any
	if in.Target == "TrentService.GenerateDataKey" {
		if in.KeySpec != "AES_256" {
			kmsError(w, "ValidationException", "KeySpec must be AES_256 here")
			return
		}
		size := f.dataKeySize
		if size == 0 {
			size = 32
		}
		plain, blob := make([]byte, size), make([]byte, 64)
		rand.Read(plain)
		rand.Read(blob)
		f.keys[string(blob)] = dataKey{plain: plain, arn: arn, context: canonical(in.EncryptionContext)}
		out = map[string]any{"CiphertextBlob": blob, "Plaintext": plain, "KeyId": arn, "KeyMaterialId": "0000"}
	} else {
		k, ok := f.keys[string(in.CiphertextBlob)]
		switch {
		case !ok:
			kmsError(w, "InvalidCiphertextException", "")
			return
		case k.arn != arn:
			kmsError(w, "IncorrectKeyException", "The key ID in the request does not identify a KMS key that can perform this operation.")
			return
		case k.context != canonical(in.EncryptionContext):
			kmsError(w, "InvalidCiphertextException", "") // as KMS answers another context
			return
		}
		out = map[string]any{"Plaintext": k.plain, "KeyId": arn, "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"}
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	json.NewEncoder(w).Encode(out)
}

// canonical is an encryption context in one spelling: its pairs sorted.
func canonical(ec map[string]string) string {
	pairs := make([]string, 0, len(ec))
	for name, value := range ec {
		pairs = append(pairs, fmt.Sprintf("%q=%q", name, value))
	}
	sort.Strings(pairs)
	return strings.Join(pairs, ",")
}

// TakeAsked returns the requests since the last call.
func (f *FakeKMS) TakeAsked() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	asked := f.asked
	f.asked = nil
	return asked
}
