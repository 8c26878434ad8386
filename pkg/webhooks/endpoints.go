package webhooks

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/ids"
	"payments/pkg/outbound"
	"payments/pkg/timestamp"
	"payments/pkg/vault"
)

// Rules of the endpoints a company manages (docs/webhooks.md "Endpoints").
const (
	// MaxEndpoints is how many endpoints a company may create; the
	// console's endpoint is not counted.
	MaxEndpoints = 16
	// AllEvents in enabled_events subscribes to every kind.
	AllEvents = "*"
	// EndpointSecretPrefix starts the secret of an endpoint a company
	// creates (the console's keeps the spec's 64 hex characters).
	EndpointSecretPrefix = "whsec_"
	// DefaultOverlap is how long a rotated-out secret keeps signing when
	// the rotation does not say.
	DefaultOverlap = 24 * time.Hour
	// MaxOverlapHours bounds expire_previous_in_hours.
	MaxOverlapHours = 168
	// maxURLLength and maxDescriptionLength bound an endpoint's text.
	maxURLLength         = 2048
	maxDescriptionLength = 500
)

// EndpointStatus is whether an endpoint receives deliveries.
type EndpointStatus string

// Endpoint statuses.
const (
	EndpointEnabled  EndpointStatus = "enabled"
	EndpointDisabled EndpointStatus = "disabled"
)

// Errors of endpoints.
var (
	// ErrEndpointNotFound is an endpoint id the company does not have.
	ErrEndpointNotFound = errors.New("webhooks: endpoint not found")
	// ErrTooManyEndpoints is a create past MaxEndpoints.
	ErrTooManyEndpoints = errors.New("webhooks: too many endpoints")
)

// Endpoint is an HTTPS address where a company receives the events it
// subscribed to, signed with the endpoint's secret.
type Endpoint struct {
	ID        string
	CompanyID string
	URL       string
	// EnabledEvents is ["*"] or a list of kinds.
	EnabledEvents []string
	Description   string
	Status        EndpointStatus
	// Secret signs deliveries; the console's endpoint with signing turned
	// off has none. It is in clear only where it was just made (a create,
	// a rotation), opened (OpenSecrets) or read from an endpoint stored
	// before secrets were sealed: a store writes SealedSecret, never it
	// (SealSecrets).
	Secret string
	// PreviousSecret also signs deliveries created before
	// PreviousExpiresAt: the overlap of a rotation. In clear as Secret is.
	PreviousSecret    string
	PreviousExpiresAt time.Time
	// SealedSecret and SealedPrevious are Secret and PreviousSecret as
	// stored: sealed under SecretContext, zero when there is none (or
	// while it is in clear).
	SealedSecret, SealedPrevious vault.Sealed
	// Console marks the endpoint the operator console manages through the
	// company's webhook_url; its id is the company id.
	Console   bool
	CreatedAt time.Time
	UpdatedAt time.Time
}

// SecretContext is the context e's secrets are sealed under:
// vault.WebhookSecret of its company and its id (the company id for the
// console's endpoint, its id in the store).
func (e Endpoint) SecretContext() vault.Context { return vault.WebhookSecret(e.CompanyID, e.ID) }

// HasSecret reports whether e signs its deliveries: its secret in clear or
// sealed.
func (e Endpoint) HasSecret() bool { return e.Secret != "" || !e.SealedSecret.IsZero() }

// HasPrevious reports whether e has a rotated-out secret, in clear or
// sealed.
func (e Endpoint) HasPrevious() bool { return e.PreviousSecret != "" || !e.SealedPrevious.IsZero() }

// Sealer seals and opens signing secrets (a *vault.Vault), each under the
// context of its endpoint (Endpoint.SecretContext).
type Sealer interface {
	Seal(ctx context.Context, secret []byte, ec vault.Context) (vault.Sealed, error)
	Open(ctx context.Context, s vault.Sealed, ec vault.Context) ([]byte, error)
}

// SealSecrets seals each secret e holds in clear (one just made, or one
// read from an endpoint stored before secrets were sealed) into
// SealedSecret or SealedPrevious and clears it: what a store may write.
// It reports whether it sealed any.
func SealSecrets(ctx context.Context, s Sealer, e *Endpoint) (bool, error) {
	sealed := false
	for _, f := range []struct {
		clear  *string
		sealed *vault.Sealed
	}{{&e.Secret, &e.SealedSecret}, {&e.PreviousSecret, &e.SealedPrevious}} {
		if *f.clear == "" {
			continue
		}
		v, err := s.Seal(ctx, []byte(*f.clear), e.SecretContext())
		if err != nil {
			return sealed, fmt.Errorf("webhooks: seal the secret of endpoint %s: %w", e.ID, err)
		}
		*f.sealed, *f.clear, sealed = v, "", true
	}
	return sealed, nil
}

// OpenSecrets returns e with the secrets that sign its deliveries at now in
// clear: the current one, and the previous one while it has not expired
// (no other is opened). A secret already in clear (stored before secrets
// were sealed) is used as it is.
func OpenSecrets(ctx context.Context, s Sealer, e Endpoint, now time.Time) (Endpoint, error) {
	open := func(clear *string, sealed vault.Sealed) error {
		if *clear != "" || sealed.IsZero() {
			return nil
		}
		b, err := s.Open(ctx, sealed, e.SecretContext())
		if err != nil {
			return fmt.Errorf("webhooks: open the secret of endpoint %s: %w", e.ID, err)
		}
		*clear = string(b)
		return nil
	}
	if err := open(&e.Secret, e.SealedSecret); err != nil {
		return Endpoint{}, err
	}
	if now.Before(e.PreviousExpiresAt) {
		if err := open(&e.PreviousSecret, e.SealedPrevious); err != nil {
			return Endpoint{}, err
		}
	}
	return e, nil
}

// Receives reports whether the endpoint takes deliveries of kind now.
func (e Endpoint) Receives(kind events.Kind) bool {
	if e.Status != EndpointEnabled || e.URL == "" {
		return false
	}
	return slices.Contains(e.EnabledEvents, AllEvents) || slices.Contains(e.EnabledEvents, string(kind))
}

// Sign returns the signature header of body at now: the current secret's
// v1 first, then the previous secret's while it has not expired; "" when the
// endpoint has no secret. It signs with the secrets in clear: those of
// OpenSecrets.
func (e Endpoint) Sign(now time.Time, body []byte) string {
	if e.Secret == "" {
		return ""
	}
	if e.PreviousSecret != "" && now.Before(e.PreviousExpiresAt) {
		return header(now, body, e.Secret, e.PreviousSecret)
	}
	return header(now, body, e.Secret)
}

// EndpointStore keeps endpoints, in the company's partition.
type EndpointStore interface {
	// CreateEndpoint writes a new endpoint, refused with
	// ErrTooManyEndpoints when the company has max already.
	CreateEndpoint(ctx context.Context, e Endpoint, max int) error
	// Endpoint reads one endpoint, or ErrEndpointNotFound.
	Endpoint(ctx context.Context, companyID, id string) (Endpoint, error)
	// Endpoints reads every endpoint of the company, the console's first
	// (without a URL when the company has a signing secret and no
	// webhook_url), then the others oldest first.
	Endpoints(ctx context.Context, companyID string) ([]Endpoint, error)
	// UpdateEndpoint reads the endpoint, applies change and writes it back
	// on the condition that nobody wrote it in between (tried again from a
	// fresh read otherwise); ErrEndpointNotFound when absent.
	UpdateEndpoint(ctx context.Context, companyID, id string, change func(*Endpoint) error) (Endpoint, error)
	// DeleteEndpoint removes the endpoint, or ErrEndpointNotFound.
	DeleteEndpoint(ctx context.Context, companyID, id string) error
}

// Endpoints is the service behind /webhooks/endpoints.
type Endpoints struct {
	store         EndpointStore
	sealer        Sealer
	allowLoopback bool
	now           func() time.Time
}

// NewEndpoints returns the endpoints service over store, its secrets
// sealed by sealer; allowLoopback admits loopback URLs (the local stack's
// switch, outbound's); it tells the time by now (time.Now when nil).
func NewEndpoints(store EndpointStore, sealer Sealer, allowLoopback bool, now func() time.Time) *Endpoints {
	if now == nil {
		now = time.Now
	}
	return &Endpoints{store: store, sealer: sealer, allowLoopback: allowLoopback, now: now}
}

// Now is the service's current time, which its answers are stamped with.
func (s *Endpoints) Now() time.Time { return s.now() }

// EndpointInput is what a create or an update sets; nil fields are left as
// they are (a create requires URL and EnabledEvents).
type EndpointInput struct {
	URL           *string
	EnabledEvents []string
	Description   *string
	Status        *EndpointStatus
}

// Create makes a new enabled endpoint with a new secret.
func (s *Endpoints) Create(ctx context.Context, companyID string, in EndpointInput) (Endpoint, error) {
	if in.URL == nil {
		return Endpoint{}, field.Invalid("url", "is required")
	}
	if in.EnabledEvents == nil {
		return Endpoint{}, field.Invalid("enabled_events", `is required: ["*"] or a list of event names`)
	}
	if in.Status != nil {
		return Endpoint{}, field.Invalid("status", "is set by PATCH; a new endpoint is enabled")
	}
	secret, err := NewSecret()
	if err != nil {
		return Endpoint{}, err
	}
	now := timestamp.Of(s.now())
	e := Endpoint{
		ID: ids.NewV7(now), CompanyID: companyID, Status: EndpointEnabled,
		Secret: EndpointSecretPrefix + secret, CreatedAt: now, UpdatedAt: now,
	}
	if err := s.apply(&e, in); err != nil {
		return Endpoint{}, err
	}
	if _, err := SealSecrets(ctx, s.sealer, &e); err != nil {
		return Endpoint{}, err
	}
	if err := s.store.CreateEndpoint(ctx, e, MaxEndpoints); err != nil {
		return Endpoint{}, err
	}
	// The answer shows the secret just made, once.
	e.Secret = EndpointSecretPrefix + secret
	return e, nil
}

// List returns the company's endpoints that have a URL, the console's
// first.
func (s *Endpoints) List(ctx context.Context, companyID string) ([]Endpoint, error) {
	es, err := s.store.Endpoints(ctx, companyID)
	return slices.DeleteFunc(es, func(e Endpoint) bool { return e.URL == "" }), err
}

// Get returns one of the company's endpoints; another company's, or an id
// that is not a UUID, is ErrEndpointNotFound.
func (s *Endpoints) Get(ctx context.Context, companyID, id string) (Endpoint, error) {
	if !ids.IsUUID(id) {
		return Endpoint{}, ErrEndpointNotFound
	}
	return s.store.Endpoint(ctx, companyID, id)
}

// Update changes the fields in sets.
func (s *Endpoints) Update(ctx context.Context, companyID, id string, in EndpointInput) (Endpoint, error) {
	if !ids.IsUUID(id) {
		return Endpoint{}, ErrEndpointNotFound
	}
	if in.URL == nil && in.EnabledEvents == nil && in.Description == nil && in.Status == nil {
		return Endpoint{}, field.Invalid("body", "must set at least one of url, enabled_events, description, status")
	}
	var probe Endpoint
	if err := s.apply(&probe, in); err != nil {
		return Endpoint{}, err
	}
	now := timestamp.Of(s.now())
	return s.store.UpdateEndpoint(ctx, companyID, id, func(e *Endpoint) error {
		e.UpdatedAt = now
		if err := s.apply(e, in); err != nil {
			return err
		}
		// An endpoint stored before secrets were sealed is written back
		// sealed.
		_, err := SealSecrets(ctx, s.sealer, e)
		return err
	})
}

// Delete removes the endpoint: no delivery to it is created from now on,
// and its pending deliveries stop at their next attempt.
func (s *Endpoints) Delete(ctx context.Context, companyID, id string) error {
	if !ids.IsUUID(id) {
		return ErrEndpointNotFound
	}
	return s.store.DeleteEndpoint(ctx, companyID, id)
}

// Rotate gives the endpoint a new secret. The previous one keeps signing
// deliveries, beside the new one, for overlap (0 drops it at once).
func (s *Endpoints) Rotate(ctx context.Context, companyID, id string, overlap time.Duration) (Endpoint, error) {
	if !ids.IsUUID(id) {
		return Endpoint{}, ErrEndpointNotFound
	}
	secret, err := NewSecret()
	if err != nil {
		return Endpoint{}, err
	}
	now := timestamp.Of(s.now())
	var issued string
	e, err := s.store.UpdateEndpoint(ctx, companyID, id, func(e *Endpoint) error {
		prefix := EndpointSecretPrefix
		if e.Console {
			prefix = ""
		}
		issued = prefix + secret
		rotate(e, issued, now, overlap)
		_, err := SealSecrets(ctx, s.sealer, e)
		return err
	})
	if err != nil {
		return Endpoint{}, err
	}
	// The answer shows the secret just made, once, not one opened again.
	e.Secret = issued
	return e, nil
}

// rotate replaces e's secret with secret (in clear, sealed afterwards) at
// now, keeping the previous one, as it is stored, for overlap: a sealed
// secret stays sealed under the same context.
func rotate(e *Endpoint, secret string, now time.Time, overlap time.Duration) {
	e.PreviousSecret, e.SealedPrevious, e.PreviousExpiresAt = "", vault.Sealed{}, time.Time{}
	if overlap > 0 && e.HasSecret() {
		e.PreviousSecret, e.SealedPrevious, e.PreviousExpiresAt = e.Secret, e.SealedSecret, now.Add(overlap)
	}
	e.Secret, e.SealedSecret = secret, vault.Sealed{}
	e.UpdatedAt = now
}

// apply checks in and sets it on e.
func (s *Endpoints) apply(e *Endpoint, in EndpointInput) error {
	if in.URL != nil {
		if err := CheckEndpointURL(*in.URL, s.allowLoopback); err != nil {
			return err
		}
		e.URL = *in.URL
	}
	if in.EnabledEvents != nil {
		kinds, err := checkEnabledEvents(in.EnabledEvents)
		if err != nil {
			return err
		}
		e.EnabledEvents = kinds
	}
	if in.Description != nil {
		if utf8.RuneCountInString(*in.Description) > maxDescriptionLength {
			return field.Invalid("description", fmt.Sprintf("must be at most %d characters", maxDescriptionLength))
		}
		e.Description = *in.Description
	}
	if in.Status != nil {
		if *in.Status != EndpointEnabled && *in.Status != EndpointDisabled {
			return field.Invalid("status", "must be enabled or disabled")
		}
		e.Status = *in.Status
	}
	return nil
}

// CheckEndpointURL accepts an absolute https URL with a host, no user
// information, at most 2,048 characters, whose host is not a private,
// link-local, metadata or other non-public address, nor a loopback one
// unless allowLoopback (the rules deliveries are sent by: a host name is
// checked again when dialled).
func CheckEndpointURL(raw string, allowLoopback bool) error {
	if outbound.CheckURL(raw) != nil {
		return field.Invalid("url", "must be an absolute https URL with a host")
	}
	if len(raw) > maxURLLength {
		return field.Invalid("url", fmt.Sprintf("must be at most %d characters", maxURLLength))
	}
	u, _ := url.Parse(raw)
	host := strings.ToLower(u.Hostname())
	addr, err := netip.ParseAddr(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") {
		addr, err = netip.IPv6Loopback(), nil
	}
	if err == nil {
		if why := outbound.Refused(addr, allowLoopback); why != "" {
			return field.Invalid("url", "must not be "+why)
		}
	}
	return nil
}

// checkEnabledEvents returns kinds without duplicates when each is a kind
// of the catalogue, or is ["*"] alone.
func checkEnabledEvents(kinds []string) ([]string, error) {
	if len(kinds) == 0 {
		return nil, field.Invalid("enabled_events", `must not be empty: ["*"] or a list of event names`)
	}
	var out []string
	for _, k := range kinds {
		switch {
		case k == AllEvents && len(kinds) == 1:
		case k == AllEvents:
			return nil, field.Invalid("enabled_events", `"*" subscribes to every event and stands alone`)
		case !events.Kind(k).Known():
			return nil, field.Invalid("enabled_events", fmt.Sprintf("%q is not an event name of the catalogue (docs/events.md)", k))
		}
		if !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out, nil
}
