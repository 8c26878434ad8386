// Package sessions keeps the company dashboard's sessions: who signed in,
// for which company and with which role, until when. A session is two
// halves: a record in the store, which sign-out deletes (so a copied
// cookie dies with it), and a cookie value sealed with AES-GCM under the
// dashboard's session key, which names the record and cannot be read or
// forged without the key. A session lasts Lifetime from its sign-in, an
// absolute expiry: using it does not extend it.
package sessions

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"payments/pkg/identity"
)

// Lifetime is how long a session lasts from its sign-in, however much it
// is used.
const Lifetime = 8 * time.Hour

// MinKeyLength is the shortest session key NewManager accepts: the key is
// a secret of Secrets Manager (48 random characters) or the local stack's,
// hashed to the AES-256 key.
const MinKeyLength = 32

// Session is one person's signed-in session.
type Session struct {
	// ID is the session's random id (128 bits, base64url).
	ID        string
	CompanyID string
	// Subject is the user pool's id of the person.
	Subject string
	Email   string
	Role    identity.Role
	Created time.Time
	Expires time.Time
}

// Store keeps the sessions' records.
type Store interface {
	// CreateSession writes s.
	CreateSession(ctx context.Context, s Session) error
	// Session reads session id of the company, or ErrNotFound.
	Session(ctx context.Context, companyID, id string) (Session, error)
	// DeleteSession deletes session id of the company; deleting one that
	// is gone is not an error.
	DeleteSession(ctx context.Context, companyID, id string) error
	// DeleteSessionsOf deletes every session of the company's person
	// email.
	DeleteSessionsOf(ctx context.Context, companyID, email string) error
}

// Errors of the sessions.
var (
	// ErrNotFound: no such session (signed out, or never was).
	ErrNotFound = errors.New("sessions: not found")
	// ErrInvalid: a cookie value that was not sealed with the key, for
	// that purpose, or is malformed.
	ErrInvalid = errors.New("sessions: invalid cookie")
	// ErrExpired: the session, or the sealed value, has expired.
	ErrExpired = errors.New("sessions: expired")
)

// Manager starts, resumes and ends sessions, and seals the short-lived
// values of the sign-in's steps.
type Manager struct {
	store Store
	aead  cipher.AEAD
	now   func() time.Time
}

// NewManager returns a Manager over store, sealing with key (at least
// MinKeyLength bytes, hashed with SHA-256 to the AES-256 key) and telling
// the time by now (time.Now when nil).
func NewManager(store Store, key []byte, now func() time.Time) (*Manager, error) {
	if store == nil {
		return nil, errors.New("sessions: no Store")
	}
	if len(key) < MinKeyLength {
		return nil, fmt.Errorf("sessions: the session key has %d bytes, fewer than %d", len(key), MinKeyLength)
	}
	sum := sha256.Sum256(key)
	block, err := aes.NewCipher(sum[:])
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	if now == nil {
		now = time.Now
	}
	return &Manager{store: store, aead: aead, now: now}, nil
}

// The purposes of sealed values: a value sealed for one is refused as
// another (the purpose is the AEAD's additional data).
const (
	purposeSession = "dashboard session"
	// PurposeChallenge seals a sign-in's pending challenge.
	PurposeChallenge = "dashboard challenge"
)

// cookie is what a session's cookie holds: enough to find its record.
type cookie struct {
	ID        string `json:"id"`
	CompanyID string `json:"company"`
	Expires   int64  `json:"exp"`
}

// Start records a session of user, who has just signed in, and returns it
// with the value of its cookie.
func (m *Manager) Start(ctx context.Context, user identity.User) (Session, string, error) {
	if user.CompanyID == "" || !user.Role.Valid() {
		return Session{}, "", fmt.Errorf("sessions: user %q has no company or no valid role", user.Subject)
	}
	id := make([]byte, 16)
	rand.Read(id)
	now := m.now().UTC().Truncate(time.Second)
	s := Session{
		ID: base64.RawURLEncoding.EncodeToString(id), CompanyID: user.CompanyID,
		Subject: user.Subject, Email: strings.ToLower(user.Email), Role: user.Role, // as identity.Email writes it: EndAllOf finds it
		Created: now, Expires: now.Add(Lifetime),
	}
	if err := m.store.CreateSession(ctx, s); err != nil {
		return Session{}, "", err
	}
	value, err := m.Seal(purposeSession, cookie{s.ID, s.CompanyID, s.Expires.Unix()}, s.Expires)
	if err != nil {
		return Session{}, "", err
	}
	return s, value, nil
}

// Resume returns the live session of a cookie's value: ErrInvalid for a
// value not sealed by this key, ErrExpired past its expiry, ErrNotFound
// once signed out.
func (m *Manager) Resume(ctx context.Context, value string) (Session, error) {
	var c cookie
	if err := m.Open(purposeSession, value, &c); err != nil {
		return Session{}, err
	}
	s, err := m.store.Session(ctx, c.CompanyID, c.ID)
	if err != nil {
		return Session{}, err
	}
	// DynamoDB's TTL deletes an expired record within days, not at once.
	if !m.now().Before(s.Expires) {
		return Session{}, ErrExpired
	}
	return s, nil
}

// End deletes the session of a cookie's value, so that the cookie no
// longer works anywhere. A value that names no live session ends nothing.
func (m *Manager) End(ctx context.Context, value string) error {
	var c cookie
	if err := m.Open(purposeSession, value, &c); err != nil {
		if errors.Is(err, ErrExpired) || errors.Is(err, ErrInvalid) {
			return nil
		}
		return err
	}
	return m.store.DeleteSession(ctx, c.CompanyID, c.ID)
}

// EndAllOf ends every session of the company's person email, wherever
// they signed in: a role changed or a member removed takes effect at their
// next request, which must sign in again.
func (m *Manager) EndAllOf(ctx context.Context, companyID, email string) error {
	return m.store.DeleteSessionsOf(ctx, companyID, email)
}

// sealed is a sealed value's plain text: the value and its expiry.
type sealed struct {
	Value   json.RawMessage `json:"v"`
	Expires int64           `json:"e"`
}

// Seal encrypts v (as JSON) for purpose, to be opened until expires, and
// returns it as base64url text, fit for a cookie.
func (m *Manager) Seal(purpose string, v any, expires time.Time) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	plain, err := json.Marshal(sealed{b, expires.Unix()})
	if err != nil {
		return "", err
	}
	nonce := make([]byte, m.aead.NonceSize())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(m.aead.Seal(nonce, nonce, plain, []byte(purpose))), nil
}

// Open decrypts text that Seal made for purpose into v: ErrInvalid when
// it was not, ErrExpired past its expiry.
func (m *Manager) Open(purpose, text string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(text)
	n := m.aead.NonceSize()
	if err != nil || len(b) < n+m.aead.Overhead() {
		return ErrInvalid
	}
	plain, err := m.aead.Open(nil, b[:n], b[n:], []byte(purpose))
	if err != nil {
		return ErrInvalid
	}
	var s sealed
	if err := json.Unmarshal(plain, &s); err != nil {
		return ErrInvalid
	}
	if !m.now().Before(time.Unix(s.Expires, 0)) {
		return ErrExpired
	}
	if err := json.Unmarshal(s.Value, v); err != nil {
		return ErrInvalid
	}
	return nil
}
