// Package vault encrypts card secrets (card numbers and CVVs) at rest with
// envelope encryption.
//
// Every sealing makes a fresh 256-bit data key with a KeyService: the key in
// clear, which encrypts the secret with AES-256-GCM and is then zeroed, and
// the same key encrypted under a master key, which is stored beside the
// ciphertext with the id of that master key. Opening asks the KeyService to
// decrypt the data key again. In a deployment the master key is a KMS key
// that never leaves AWS (KMS); locally and in tests it is a 256-bit key held
// in process (Local). Either way the service stores no key in clear.
//
// Every sealing names what it seals with a Context ({company_id, card_id,
// field} for a card's number or CVC, {company_id, endpoint_id} for a webhook
// signing secret). The context is the encryption context of the KMS calls
// that make and open the data key (so that KMS's key policy and its log can
// name it) and, in its canonical form, the associated data of the GCM
// encryption: a sealed secret is bound to its company, its card or endpoint
// and its field, and opening it under any other context fails (a number
// cannot pass for a CVC, nor one card's for another's), as does opening it
// after any of its bytes changed or with another master key. Every such
// failure is ErrOpen.
//
// Token is an opaque token of one sealing, derived from its encrypted bytes
// only: what the spec's "opaque token" of a card number or CVV is, shown
// instead of the secret when it is not revealed. It says nothing of the
// secret, and two sealings of the same secret have different tokens.
//
// Errors never carry a secret or a data key, and this package logs nothing.
package vault

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"sort"
)

// DataKeySize is the size in bytes of a data key: AES-256.
const DataKeySize = 32

var (
	// ErrOpen reports sealed data that does not authenticate: another
	// associated value, changed bytes, or another master key.
	ErrOpen = errors.New("vault: cannot open sealed data")
	// ErrKey reports a key service that failed to make or open a data key,
	// or answered one that is not a 256-bit key.
	ErrKey = errors.New("vault: key service failed")
	// ErrMasterKey reports a local master key that is not 256 bits.
	ErrMasterKey = errors.New("vault: invalid master key")
	// ErrAssociated reports a sealing or an opening with no context, or
	// with a context of an empty name or value.
	ErrAssociated = errors.New("vault: no context")
)

// Context names a sealed secret: KMS's encryption context, and the GCM
// associated data in its canonical form. Its names and values are not
// secret (KMS logs them).
type Context map[string]string

// The fields of a card's secrets.
const (
	FieldNumber = "number"
	FieldCVC    = "cvc"
)

// CardField is the context of a card's secret field, FieldNumber or
// FieldCVC.
func CardField(companyID, cardID, field string) Context {
	return Context{"company_id": companyID, "card_id": cardID, "field": field}
}

// WebhookSecret is the context of a webhook endpoint's signing secret.
func WebhookSecret(companyID, endpointID string) Context {
	return Context{"company_id": companyID, "endpoint_id": endpointID}
}

// Canonical returns c's associated data: its pairs sorted by name, each
// name and value preceded by its length, so that no two contexts share it.
// It is ErrAssociated if c is empty or has an empty name or value.
func (c Context) Canonical() ([]byte, error) {
	if len(c) == 0 {
		return nil, ErrAssociated
	}
	names := make([]string, 0, len(c))
	for name, value := range c {
		if name == "" || value == "" {
			return nil, fmt.Errorf("%w: empty name or value in the context", ErrAssociated)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var b []byte
	for _, name := range names {
		b = binary.BigEndian.AppendUint32(b, uint32(len(name)))
		b = append(b, name...)
		b = binary.BigEndian.AppendUint32(b, uint32(len(c[name])))
		b = append(b, c[name]...)
	}
	return b, nil
}

// KeyService makes and opens data keys under a master key, each bound to
// the context of the secret it seals: a data key made under one context
// opens under that context only.
type KeyService interface {
	// NewDataKey returns a fresh 256-bit data key, in clear and encrypted under the master key for ec, and the id of the master key (its version) that encrypted it.
	NewDataKey(ctx context.Context, ec Context) (plain, encrypted []byte, keyID string, err error)
	// OpenDataKey returns the clear data key of encrypted, made by NewDataKey under master key keyID for ec.
	OpenDataKey(ctx context.Context, encrypted []byte, keyID string, ec Context) ([]byte, error)
}

// Sealed is a secret as stored. A store keeps it as a map of its parts,
// in binary, under the attribute names of its tags.
type Sealed struct {
	KeyID      string `dynamodbav:"key_id"`   // the master key that encrypted DataKey
	DataKey    []byte `dynamodbav:"data_key"` // the data key, encrypted under KeyID
	Nonce      []byte `dynamodbav:"nonce"`
	Ciphertext []byte `dynamodbav:"ciphertext"` // AES-256-GCM of the secret, with the associated data of Seal
}

// IsZero reports whether s holds no secret (a card not issued yet).
func (s Sealed) IsZero() bool { return s.KeyID == "" && len(s.Ciphertext) == 0 }

// Token returns an opaque token of s: "tok_" and the first 32 hexadecimal
// characters of SHA-256 over KeyID, DataKey, Nonce and Ciphertext, each
// preceded by its length. It is not the secret and cannot give it back, it
// differs for every sealing, and it is safe to show.
func (s Sealed) Token() string {
	h := sha256.New()
	var n [8]byte
	for _, field := range [][]byte{[]byte(s.KeyID), s.DataKey, s.Nonce, s.Ciphertext} {
		binary.BigEndian.PutUint64(n[:], uint64(len(field)))
		h.Write(n[:])
		h.Write(field)
	}
	sum := h.Sum(nil)
	return "tok_" + hex.EncodeToString(sum[:16])
}

// Vault seals and opens secrets. It is safe for concurrent use.
type Vault struct {
	keys KeyService
}

// New returns a Vault whose data keys are made and opened by keys.
func New(keys KeyService) *Vault {
	return &Vault{keys: keys}
}

// Seal encrypts secret under a fresh data key, binding it to ec: Open with
// another context fails.
func (v *Vault) Seal(ctx context.Context, secret []byte, ec Context) (Sealed, error) {
	associated, err := ec.Canonical()
	if err != nil {
		return Sealed{}, err
	}
	plain, encrypted, keyID, err := v.keys.NewDataKey(ctx, ec)
	defer clear(plain)
	if err != nil {
		return Sealed{}, err
	}
	if keyID == "" || len(encrypted) == 0 {
		return Sealed{}, fmt.Errorf("%w: no encrypted data key or key id", ErrKey)
	}
	aead, err := newGCM(plain)
	if err != nil {
		return Sealed{}, err
	}
	nonce := make([]byte, aead.NonceSize())
	rand.Read(nonce) // never fails: a failing system source ends the program
	return Sealed{
		KeyID:      keyID,
		DataKey:    encrypted,
		Nonce:      nonce,
		Ciphertext: aead.Seal(nil, nonce, secret, associated),
	}, nil
}

// Open decrypts s, sealed for ec.
func (v *Vault) Open(ctx context.Context, s Sealed, ec Context) ([]byte, error) {
	associated, err := ec.Canonical()
	if err != nil {
		return nil, err
	}
	if s.KeyID == "" || len(s.DataKey) == 0 || len(s.Nonce) != gcmNonceSize {
		return nil, fmt.Errorf("%w: incomplete sealed data", ErrOpen)
	}
	plain, err := v.keys.OpenDataKey(ctx, s.DataKey, s.KeyID, ec)
	defer clear(plain)
	if err != nil {
		return nil, err
	}
	aead, err := newGCM(plain)
	if err != nil {
		return nil, err
	}
	secret, err := aead.Open(nil, s.Nonce, s.Ciphertext, associated)
	if err != nil {
		return nil, fmt.Errorf("%w: ciphertext, nonce and context do not authenticate", ErrOpen)
	}
	return secret, nil
}

// gcmNonceSize is the nonce size of the standard GCM.
const gcmNonceSize = 12

// newGCM returns AES-256-GCM under key, which must be a 256-bit data key.
func newGCM(key []byte) (cipher.AEAD, error) {
	if len(key) != DataKeySize {
		return nil, fmt.Errorf("%w: a data key of %d bytes, want %d", ErrKey, len(key), DataKeySize)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrKey, err)
	}
	return cipher.NewGCM(block)
}
