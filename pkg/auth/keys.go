package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
)

// Algorithm is the JWS algorithm of every token: ECDSA over P-256 with
// SHA-256.
const Algorithm = "ES256"

// SignatureSize is the length of an ES256 signature as JWS writes it:
// r and s, 32 bytes each (RFC 7518 §3.4).
const SignatureSize = 64

// Signer signs tokens with the private half of one P-256 key: in AWS a KMS
// key only the auth function may use (pkg/auth/kmssign), locally a key
// kept in the data folder (LocalSigner).
type Signer interface {
	// Sign returns the ES256 signature, r||s in SignatureSize bytes, of
	// digest, the SHA-256 of a token's signing input.
	Sign(ctx context.Context, digest []byte) ([]byte, error)
	// Public returns the public half of the key, which the service
	// publishes and checks tokens with.
	Public() *ecdsa.PublicKey
}

// LocalSigner is the Signer of a private key held in the process: the
// local stack's and the tests'.
type LocalSigner struct{ key *ecdsa.PrivateKey }

// NewLocalSigner returns the Signer of key, a P-256 key.
func NewLocalSigner(key *ecdsa.PrivateKey) (*LocalSigner, error) {
	if key == nil || key.Curve != elliptic.P256() {
		return nil, fmt.Errorf("%w: the signing key must be a P-256 key", ErrConfig)
	}
	return &LocalSigner{key: key}, nil
}

// Sign signs digest with the key.
func (l *LocalSigner) Sign(_ context.Context, digest []byte) ([]byte, error) {
	r, s, err := ecdsa.Sign(rand.Reader, l.key, digest)
	if err != nil {
		return nil, fmt.Errorf("auth: sign: %w", err)
	}
	sig := make([]byte, SignatureSize)
	r.FillBytes(sig[:32])
	s.FillBytes(sig[32:])
	return sig, nil
}

// Public returns the key's public half.
func (l *LocalSigner) Public() *ecdsa.PublicKey { return &l.key.PublicKey }

// LocalKeyFromHex returns the P-256 private key whose scalar is the 64
// hexadecimal characters of s: the form of the local stack's token keys
// (TOKEN_KEY_A, TOKEN_KEY_B), which it generates as it does its other
// local secrets.
func LocalKeyFromHex(s string) (*ecdsa.PrivateKey, error) {
	raw, err := hex.DecodeString(s)
	if err != nil || len(raw) != 32 {
		return nil, fmt.Errorf("%w: a local token key is 64 hexadecimal characters", ErrConfig)
	}
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), raw)
	if err != nil {
		return nil, fmt.Errorf("%w: local token key: %v", ErrConfig, err)
	}
	return key, nil
}

// JWK is the public JSON Web Key of one token key (RFC 7517, 7518 §6.2).
type JWK struct {
	Kty string `json:"kty"` // EC
	Crv string `json:"crv"` // P-256
	X   string `json:"x"`
	Y   string `json:"y"`
	Kid string `json:"kid"` // KeyID
	Use string `json:"use"` // sig
	Alg string `json:"alg"` // ES256
}

// JWKS is the body of GET /.well-known/jwks.json: the keys tokens may be
// signed with.
type JWKS struct {
	Keys []JWK `json:"keys"`
}

// PublicJWK returns the JWK of pub, a P-256 key.
func PublicJWK(pub *ecdsa.PublicKey) (JWK, error) {
	if pub == nil || pub.Curve != elliptic.P256() {
		return JWK{}, fmt.Errorf("%w: a token key must be a P-256 key", ErrConfig)
	}
	raw, err := pub.Bytes() // 0x04 || X || Y, each 32 bytes
	if err != nil {
		return JWK{}, fmt.Errorf("%w: token key: %v", ErrConfig, err)
	}
	k := JWK{Kty: "EC", Crv: "P-256",
		X: base64.RawURLEncoding.EncodeToString(raw[1:33]), Y: base64.RawURLEncoding.EncodeToString(raw[33:]),
		Use: "sig", Alg: Algorithm}
	k.Kid = k.thumbprint()
	return k, nil
}

// thumbprint returns the RFC 7638 thumbprint of k: the SHA-256 of its
// required members in lexicographic order, without white space.
func (k JWK) thumbprint() string {
	b, _ := json.Marshal(struct {
		Crv string `json:"crv"`
		Kty string `json:"kty"`
		X   string `json:"x"`
		Y   string `json:"y"`
	}{k.Crv, k.Kty, k.X, k.Y})
	sum := sha256.Sum256(b)
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// KeyID returns the kid of pub: the RFC 7638 thumbprint of its JWK.
func KeyID(pub *ecdsa.PublicKey) (string, error) {
	k, err := PublicJWK(pub)
	return k.Kid, err
}
