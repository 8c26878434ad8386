package vault

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
)

// Local is the KeyService of the local stack and tests: a 256-bit master key
// held in process. A data key is encrypted under it with AES-256-GCM, the
// context's canonical form as associated data (as KMS binds its encryption
// context), stored as nonce || ciphertext, and its key id is "local:" and the first 8
// hexadecimal characters of SHA-256 of the master key, so that data sealed
// under another local key fails to open with an error that says so.
type Local struct {
	aead cipher.AEAD
	id   string
}

// NewLocal returns the Local KeyService of master, which must be exactly 32
// bytes. It keeps no reference to master, which the caller may clear.
func NewLocal(master []byte) (*Local, error) {
	if len(master) != DataKeySize {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrMasterKey, len(master), DataKeySize)
	}
	block, err := aes.NewCipher(master)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMasterKey, err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrMasterKey, err)
	}
	sum := sha256.Sum256(master)
	return &Local{aead: aead, id: "local:" + hex.EncodeToString(sum[:4])}, nil
}

// LocalKeyFromHex parses the 64-hexadecimal-character form of a local master
// key, as the local stack keeps it in .cache/card-key and passes it in
// CARD_KEY. Surrounding white space (a file's final newline) is ignored.
func LocalKeyFromHex(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) != 2*DataKeySize {
		return nil, fmt.Errorf("%w: %d characters, want %d hexadecimal characters", ErrMasterKey, len(s), 2*DataKeySize)
	}
	key, err := hex.DecodeString(s)
	if err != nil {
		// The decoder's error quotes the offending character: not repeated.
		return nil, fmt.Errorf("%w: not hexadecimal", ErrMasterKey)
	}
	return key, nil
}

// KeyID returns the id of the master key: "local:" and 8 hexadecimal
// characters.
func (l *Local) KeyID() string { return l.id }

// String returns the key id, never the key.
func (l *Local) String() string { return "vault.Local(" + l.id + ")" }

// NewDataKey returns a fresh random 256-bit data key, in clear and encrypted
// under the master key, and the master key's id.
func (l *Local) NewDataKey(ctx context.Context, ec Context) (plain, encrypted []byte, keyID string, err error) {
	associated, err := ec.Canonical()
	if err != nil {
		return nil, nil, "", err
	}
	plain = make([]byte, DataKeySize)
	rand.Read(plain) // never fails: a failing system source ends the program
	nonce := make([]byte, l.aead.NonceSize(), l.aead.NonceSize()+DataKeySize+l.aead.Overhead())
	rand.Read(nonce)
	return plain, l.aead.Seal(nonce, nonce, plain, associated), l.id, nil
}

// OpenDataKey returns the clear data key of encrypted, made by NewDataKey of
// a Local with the master key keyID for ec. Another master key, another
// context, or changed bytes, is ErrOpen.
func (l *Local) OpenDataKey(ctx context.Context, encrypted []byte, keyID string, ec Context) ([]byte, error) {
	associated, err := ec.Canonical()
	if err != nil {
		return nil, err
	}
	if keyID != l.id {
		return nil, fmt.Errorf("%w: sealed under master key %q, this local key is %q", ErrOpen, keyID, l.id)
	}
	n := l.aead.NonceSize()
	if len(encrypted) < n+l.aead.Overhead() {
		return nil, fmt.Errorf("%w: encrypted data key too short", ErrOpen)
	}
	plain, err := l.aead.Open(nil, encrypted[:n], encrypted[n:], associated)
	if err != nil {
		return nil, fmt.Errorf("%w: the data key does not authenticate under master key %q and its context", ErrOpen, l.id)
	}
	return plain, nil
}
