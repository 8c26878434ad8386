// Package kmstest gives tests a stand-in for the AWS KMS of token keys: an
// HTTP server that answers GetPublicKey and Sign (the JSON 1.1 protocol,
// blobs in base64) for the P-256 keys it holds, as KMS answers them.
package kmstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
)

// FakeKMS is a KMS stand-in holding asymmetric ECC_NIST_P256 keys.
type FakeKMS struct {
	// URL is its endpoint (AWS_ENDPOINT_URL_KMS).
	URL string

	mu    sync.Mutex
	keys  map[string]*ecdsa.PrivateKey // by ARN
	asked []string                     // "Target KeyId"
}

// New starts a FakeKMS, closed when the test ends.
func New(t testing.TB) *FakeKMS {
	f := &FakeKMS{keys: map[string]*ecdsa.PrivateKey{}}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// AddKey makes a new P-256 key named arn and returns it.
func (f *FakeKMS) AddKey(t testing.TB, arn string) *ecdsa.PrivateKey {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.keys[arn] = k
	return k
}

// Asked returns the requests answered since the last call, as
// "Target KeyId".
func (f *FakeKMS) Asked() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.asked
	f.asked = nil
	return a
}

func kmsError(w http.ResponseWriter, kind, message string) {
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"__type": kind, "message": message})
}

// ServeHTTP answers one KMS request.
func (f *FakeKMS) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var in struct {
		KeyId            string //lint:ignore ST1003 the name of KMS's field
		Message          []byte
		MessageType      string
		SigningAlgorithm string
	}
	if r.Header.Get("Content-Type") != "application/x-amz-json-1.1" || json.NewDecoder(r.Body).Decode(&in) != nil {
		kmsError(w, "ValidationException", "not a JSON 1.1 request")
		return
	}
	target := r.Header.Get("X-Amz-Target")
	f.mu.Lock()
	f.asked = append(f.asked, target+" "+in.KeyId)
	key, ok := f.keys[in.KeyId]
	f.mu.Unlock()
	if !ok {
		kmsError(w, "NotFoundException", "no such key")
		return
	}
	var out map[string]any
	switch target {
	case "TrentService.GetPublicKey":
		der, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
		if err != nil {
			kmsError(w, "KMSInternalException", err.Error())
			return
		}
		out = map[string]any{"KeyId": in.KeyId, "PublicKey": der, "KeySpec": "ECC_NIST_P256", "KeyUsage": "SIGN_VERIFY",
			"SigningAlgorithms": []string{"ECDSA_SHA_256"}}
	case "TrentService.Sign":
		if in.MessageType != "DIGEST" || in.SigningAlgorithm != "ECDSA_SHA_256" || len(in.Message) != 32 {
			kmsError(w, "ValidationException", "want a 32-byte DIGEST signed with ECDSA_SHA_256")
			return
		}
		sig, err := ecdsa.SignASN1(rand.Reader, key, in.Message)
		if err != nil {
			kmsError(w, "KMSInternalException", err.Error())
			return
		}
		out = map[string]any{"KeyId": in.KeyId, "Signature": sig, "SigningAlgorithm": "ECDSA_SHA_256"}
	default:
		kmsError(w, "UnknownOperationException", "not GetPublicKey or Sign")
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	json.NewEncoder(w).Encode(out)
}
