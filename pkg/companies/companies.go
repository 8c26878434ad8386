// Package companies holds the business clients of the service: their KYB
// status, activation, webhook address, card slots and API credentials
// (client_id and client_key), and the operator console routes that manage
// them.
//
// A client_key is shown once, when it is created or rotated. Only its SHA-256
// digest is stored; see docs/auth.md for why a fast hash is right for a
// 256-bit random key.
package companies

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"payments/pkg/field"
	"payments/pkg/ids"
	"payments/pkg/timestamp"
)

// KYBStatus is where a company stands in its know-your-business review.
type KYBStatus string

// KYB statuses. APPROVED is required to enrol customers and create wallets.
const (
	KYBPending  KYBStatus = "PENDING"
	KYBApproved KYBStatus = "APPROVED"
	KYBRejected KYBStatus = "REJECTED"
)

// Valid reports whether s is one of the known statuses.
func (s KYBStatus) Valid() bool {
	switch s {
	case KYBPending, KYBApproved, KYBRejected:
		return true
	}
	return false
}

// DefaultCardSlots is the number of card slots a new company gets.
const DefaultCardSlots = 100

// MaxCardSlots is the largest card_slots the console accepts.
const MaxCardSlots = 1_000_000

// MaxNameLength is the longest company name accepted, in characters.
const MaxNameLength = 255

// Prefixes of the generated credentials.
const (
	ClientIDPrefix  = "cli_"
	ClientKeyPrefix = "sk_"
)

// MaxClientIDLength bounds the client_id of a token request, in bytes. A
// longer one cannot be one we issued (ClientIDPrefix and 24 hex digits), so
// it is unknown without being looked up: a client_id is part of a DynamoDB
// key, which may not exceed 2048 bytes.
const MaxClientIDLength = 64

// Company is a business client of the service.
type Company struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	KYBStatus  KYBStatus `json:"kyb_status"`
	IsActive   bool      `json:"is_active"`
	ClientID   string    `json:"client_id"`
	KeyHash    []byte    `json:"-"`
	KeyVersion int       `json:"key_version"`
	WebhookURL string    `json:"webhook_url"`
	CardSlots  int       `json:"card_slots"`
	CreatedAt  time.Time `json:"created_at"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// Patch is a partial update: nil fields are left as they are. An empty
// WebhookURL clears the address.
type Patch struct {
	KYBStatus  *KYBStatus
	IsActive   *bool
	WebhookURL *string
	CardSlots  *int
}

// Empty reports whether p changes nothing.
func (p Patch) Empty() bool {
	return p.KYBStatus == nil && p.IsActive == nil && p.WebhookURL == nil && p.CardSlots == nil
}

// Errors of this package.
var (
	// ErrNotFound is a company id (or client id) that does not exist.
	ErrNotFound = errors.New("companies: not found")
	// ErrKYBNotApproved is a company whose KYB status is not APPROVED,
	// asking for what needs it (a wallet, a customer's enrolment).
	ErrKYBNotApproved = errors.New("companies: KYB not approved")
	// ErrInvalidCredentials is an unknown client_id, a wrong client_key or
	// a disabled company; which one is never told.
	ErrInvalidCredentials = errors.New("companies: invalid client credentials")
)

// Store is the persistence the service needs.
type Store interface {
	// Create writes a new company and its client id lookup together.
	Create(ctx context.Context, c Company) error
	// Get reads a company by id, strongly consistent; ErrNotFound if absent.
	Get(ctx context.Context, id string) (Company, error)
	// GetByClientID reads the company that owns clientID, strongly
	// consistent; ErrNotFound if absent.
	GetByClientID(ctx context.Context, clientID string) (Company, error)
	// Update applies p to company id, setting updated_at to now, and
	// returns the result; ErrNotFound if absent.
	Update(ctx context.Context, id string, p Patch, now time.Time) (Company, error)
	// RotateKey replaces the key hash of company id, increments its key
	// version, and returns the result; ErrNotFound if absent.
	RotateKey(ctx context.Context, id string, keyHash []byte, now time.Time) (Company, error)
}

// Service manages companies and checks their credentials.
type Service struct {
	store Store
	now   func() time.Time
}

// NewService returns a Service over store, telling the time by now
// (time.Now when nil).
func NewService(store Store, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{store: store, now: now}
}

// Created is a new company with its client_key, which is shown only once.
type Created struct {
	Company
	ClientKey string `json:"client_key"`
}

// Credentials is a company's client_id with a freshly issued client_key.
type Credentials struct {
	ClientID  string `json:"client_id"`
	ClientKey string `json:"client_key"`
}

// Create registers a company named name with KYB status kyb (PENDING when
// empty) and returns it with its cleartext client_key.
func (s *Service) Create(ctx context.Context, name string, kyb KYBStatus) (Created, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return Created{}, field.Invalid("name", "is required")
	}
	if utf8.RuneCountInString(name) > MaxNameLength {
		return Created{}, field.Invalid("name", fmt.Sprintf("must be at most %d characters", MaxNameLength))
	}
	if kyb == "" {
		kyb = KYBPending
	}
	if !kyb.Valid() {
		return Created{}, invalidKYB()
	}
	key, err := newClientKey()
	if err != nil {
		return Created{}, err
	}
	clientID, err := newClientID()
	if err != nil {
		return Created{}, err
	}
	now := timestamp.Of(s.now())
	c := Company{
		ID:         uuid.NewString(),
		Name:       name,
		KYBStatus:  kyb,
		IsActive:   true,
		ClientID:   clientID,
		KeyHash:    HashKey(key),
		KeyVersion: 1,
		CardSlots:  DefaultCardSlots,
		CreatedAt:  now,
		UpdatedAt:  now,
	}
	if err := s.store.Create(ctx, c); err != nil {
		return Created{}, fmt.Errorf("companies: create: %w", err)
	}
	return Created{Company: c, ClientKey: key}, nil
}

// Get returns company id, or ErrNotFound.
func (s *Service) Get(ctx context.Context, id string) (Company, error) {
	if !ids.IsUUID(id) {
		return Company{}, ErrNotFound
	}
	return s.store.Get(ctx, id)
}

// Update applies p to company id after validating it. An empty patch
// returns the company unchanged.
func (s *Service) Update(ctx context.Context, id string, p Patch) (Company, error) {
	if p.KYBStatus != nil && !p.KYBStatus.Valid() {
		return Company{}, invalidKYB()
	}
	if p.CardSlots != nil && (*p.CardSlots < 0 || *p.CardSlots > MaxCardSlots) {
		return Company{}, field.Invalid("card_slots", fmt.Sprintf("must be an integer from 0 to %d", MaxCardSlots))
	}
	if p.WebhookURL != nil {
		if err := checkWebhookURL(*p.WebhookURL); err != nil {
			return Company{}, err
		}
	}
	if p.Empty() {
		return s.Get(ctx, id)
	}
	if !ids.IsUUID(id) {
		return Company{}, ErrNotFound
	}
	return s.store.Update(ctx, id, p, timestamp.Of(s.now()))
}

// RotateKey issues a new client_key for company id. Tokens minted from the
// previous key stop working.
func (s *Service) RotateKey(ctx context.Context, id string) (Credentials, error) {
	if !ids.IsUUID(id) {
		return Credentials{}, ErrNotFound
	}
	key, err := newClientKey()
	if err != nil {
		return Credentials{}, err
	}
	c, err := s.store.RotateKey(ctx, id, HashKey(key), timestamp.Of(s.now()))
	if err != nil {
		return Credentials{}, err
	}
	return Credentials{ClientID: c.ClientID, ClientKey: key}, nil
}

// dummyHash is compared against when a client_id is unknown, so that an
// unknown id costs the same work as a wrong key.
var dummyHash = HashKey("sk_0000000000000000000000000000000000000000000000000000000000000000")

// Verify returns the active company whose client_id and client_key match,
// or ErrInvalidCredentials whatever the reason for refusing (a client_id
// longer than MaxClientIDLength is unknown).
func (s *Service) Verify(ctx context.Context, clientID, clientKey string) (Company, error) {
	c, err := Company{}, ErrNotFound
	if len(clientID) <= MaxClientIDLength {
		c, err = s.store.GetByClientID(ctx, clientID)
	}
	want := c.KeyHash
	switch {
	case errors.Is(err, ErrNotFound):
		want = dummyHash
	case err != nil:
		return Company{}, err
	}
	match := subtle.ConstantTimeCompare(HashKey(clientKey), want) == 1
	if err != nil || !match || !c.IsActive {
		return Company{}, ErrInvalidCredentials
	}
	return c, nil
}

// HashKey returns the SHA-256 digest of a client_key, the only form in which
// the key is stored.
func HashKey(key string) []byte {
	sum := sha256.Sum256([]byte(key))
	return sum[:]
}

func newClientKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("companies: random key: %w", err)
	}
	return ClientKeyPrefix + hex.EncodeToString(b), nil
}

func newClientID() (string, error) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("companies: random client id: %w", err)
	}
	return ClientIDPrefix + hex.EncodeToString(b), nil
}

func checkWebhookURL(raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.Hostname() == "" || u.User != nil {
		return field.Invalid("webhook_url", "must be an absolute https URL, or empty to clear")
	}
	if len(raw) > 2048 {
		return field.Invalid("webhook_url", "must be at most 2048 characters")
	}
	return nil
}

func invalidKYB() error {
	return field.Invalid("kyb_status", fmt.Sprintf("must be one of %s, %s, %s", KYBPending, KYBApproved, KYBRejected))
}
