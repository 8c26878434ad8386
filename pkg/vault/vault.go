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
// The card id is the associated data of the GCM encryption: a sealed secret
// is bound to its card, and opening it under another card id fails, as does
// opening it after any of its bytes changed or with another master key. Every
// such failure is ErrOpen.
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
	// ErrAssociated reports a sealing with no associated data (card id).
	ErrAssociated = errors.New("vault: no associated data")
)

// KeyService makes and opens data keys under a master key.
type KeyService interface {
	// NewDataKey returns a fresh 256-bit data key, in clear and encrypted under the master key, and the id of the master key (its version) that encrypted it.
	NewDataKey(ctx context.Context) (plain, encrypted []byte, keyID string, err error)
	// OpenDataKey returns the clear data key of encrypted, made by NewDataKey under master key keyID.
	OpenDataKey(ctx context.Context, encrypted []byte, keyID string) ([]byte, error)
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

// Seal encrypts secret under a fresh data key, binding it to associated (the
// card id): Open with another associated value fails.
func (v *Vault) Seal(ctx context.Context, secret []byte, associated string) (Sealed, error) {
	if associated == "" {
		return Sealed{}, ErrAssociated
	}
	plain, encrypted, keyID, err := v.keys.NewDataKey(ctx)
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
		Ciphertext: aead.Seal(nil, nonce, secret, []byte(associated)),
	}, nil
}

// Open decrypts s, sealed with associated.
func (v *Vault) Open(ctx context.Context, s Sealed, associated string) ([]byte, error) {
	if s.KeyID == "" || len(s.DataKey) == 0 || len(s.Nonce) != gcmNonceSize {
		return nil, fmt.Errorf("%w: incomplete sealed data", ErrOpen)
	}
	plain, err := v.keys.OpenDataKey(ctx, s.DataKey, s.KeyID)
	defer clear(plain)
	if err != nil {
		return nil, err
	}
	aead, err := newGCM(plain)
	if err != nil {
		return nil, err
	}
	secret, err := aead.Open(nil, s.Nonce, s.Ciphertext, []byte(associated))
	if err != nil {
		return nil, fmt.Errorf("%w: ciphertext, nonce and card id do not authenticate", ErrOpen)
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
