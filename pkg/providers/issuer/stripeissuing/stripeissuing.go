// Package stripeissuing is Stripe Issuing as the card issuer of production
// mode (an issuer.Issuer, issuer.Disputes and issuer.Statements), through
// Stripe's own Go library, stripe-go: cardholders, USD virtual cards, their
// freeze, unfreeze and cancellation, the ephemeral keys with which a
// cardholder's browser reads their number and CVC from Stripe, disputes, the
// lists of its transactions and authorizations and its Issuing balance, and
// the events Stripe sends us (events.go, authevents.go, disputes.go).
//
// Stripe keeps no balance per card: its cards spend the platform's Issuing
// balance, and Stripe asks us to approve every authorization
// (issuing_authorization.request), which we decide on our ledger. So our
// card balance is the card's balance (Card.BalanceUnknown); funding,
// withdrawing and postings move nothing at Stripe; and no spending control
// is set on Stripe's side, since we decide every authorization ourselves.
// The platform's Issuing balance must cover what its cards may spend: it is
// topped up from Stripe's dashboard or its Topups API (docs/providers.md).
//
// Every create carries an Idempotency-Key derived from our reference, so a
// call whose answer was lost can be made again within Stripe's 24 hours
// of idempotency; a failed call is issuer.ErrUnavailable and stripe-go
// does not retry it on its own: the caller repeats it.
package stripeissuing

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	stripe "github.com/stripe/stripe-go/v85"

	"payments/pkg/providers/issuer"
)

// DefaultBaseURL is Stripe's API.
const DefaultBaseURL = "https://api.stripe.com"

// Reference is the metadata key of our id (the customer's, on a
// cardholder; the card's, on a card).
const Reference = "reference"

// ErrConfig is a Config the adapter cannot work with.
var ErrConfig = errors.New("stripeissuing: configuration")

// Time-outs of the default HTTP client: the whole exchange stays well
// inside the functions' time-outs.
const (
	connectTimeout = 3 * time.Second
	requestTimeout = 10 * time.Second
)

// Config configures a Client.
type Config struct {
	// APIKey is Stripe's secret key (sk_live_… or sk_test_…). Required.
	APIKey string
	// BaseURL is Stripe's API root; "": DefaultBaseURL.
	BaseURL string
	// Brand is the brand of the account's card program: Stripe issues
	// that one and no other; "": Visa.
	Brand issuer.Brand
	// HTTP sends the requests; nil: a client with a 3 s connect time-out
	// and a 10 s whole-request time-out.
	HTTP *http.Client
}

// Client is Stripe Issuing as an issuer.Issuer.
type Client struct {
	sc    *stripe.Client
	brand issuer.Brand

	mu         sync.Mutex
	references map[string]string // Stripe's card id → our card id
}

var (
	_ issuer.Issuer   = (*Client)(nil)
	_ issuer.Revealer = (*Client)(nil)
)

// New returns a Client for c, or ErrConfig naming what is wrong.
func New(c Config) (*Client, error) {
	if c.APIKey == "" {
		return nil, fmt.Errorf("%w: APIKey is required", ErrConfig)
	}
	base := c.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return nil, fmt.Errorf("%w: BaseURL must be an http(s) URL", ErrConfig)
	}
	brand := c.Brand
	switch brand {
	case "":
		brand = issuer.Visa
	case issuer.Visa, issuer.Mastercard:
	default:
		return nil, fmt.Errorf("%w: Brand %q is neither %s nor %s", ErrConfig, brand, issuer.Visa, issuer.Mastercard)
	}
	hc := c.HTTP
	if hc == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.DialContext = (&net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second}).DialContext
		t.TLSHandshakeTimeout = connectTimeout
		hc = &http.Client{Transport: t, Timeout: requestTimeout}
	}
	backend := stripe.NewBackendsWithConfig(&stripe.BackendConfig{
		URL:               stripe.String(strings.TrimRight(base, "/")),
		HTTPClient:        hc,
		MaxNetworkRetries: stripe.Int64(0),
		EnableTelemetry:   stripe.Bool(false),
		LeveledLogger:     &stripe.LeveledLogger{Level: stripe.LevelNull},
	})
	return &Client{
		sc:         stripe.NewClient(c.APIKey, stripe.WithBackends(backend)),
		brand:      brand,
		references: map[string]string{},
	}, nil
}

// EnrollCardholder creates an individual cardholder from our verified
// customer r, idempotently on r.Reference.
func (c *Client) EnrollCardholder(ctx context.Context, r issuer.CardholderRequest) (issuer.Cardholder, error) {
	p := &stripe.IssuingCardholderCreateParams{
		Type:   stripe.String("individual"),
		Name:   stripe.String(strings.TrimSpace(r.FirstName + " " + r.LastName)),
		Status: stripe.String("active"),
		Billing: &stripe.IssuingCardholderCreateBillingParams{Address: &stripe.AddressParams{
			Line1: stripe.String(r.Address.Street), City: stripe.String(r.Address.City),
			PostalCode: stripe.String(r.Address.PostalCode), Country: stripe.String(r.Address.CountryISOCode),
		}},
		Individual: &stripe.IssuingCardholderCreateIndividualParams{
			FirstName: stripe.String(r.FirstName), LastName: stripe.String(r.LastName),
		},
		Metadata: map[string]string{Reference: r.Reference},
	}
	if r.Address.State != "" {
		p.Billing.Address.State = stripe.String(r.Address.State)
	}
	if r.Email != "" {
		p.Email = stripe.String(r.Email)
	}
	if r.PhoneNumber != "" {
		p.PhoneNumber = stripe.String("+" + strings.TrimPrefix(r.PhoneCountryCode, "+") + r.PhoneNumber)
	}
	if !r.DateOfBirth.IsZero() {
		d := r.DateOfBirth
		p.Individual.DOB = &stripe.IssuingCardholderCreateIndividualDOBParams{
			Day: stripe.Int64(int64(d.Day())), Month: stripe.Int64(int64(d.Month())), Year: stripe.Int64(int64(d.Year())),
		}
	}
	p.SetIdempotencyKey("cardholder-" + r.Reference)
	ch, err := c.sc.V1IssuingCardholders.Create(ctx, p)
	if err != nil {
		return issuer.Cardholder{}, fail("create a cardholder", err, issuer.ErrDeclined)
	}
	return cardholder(ch), nil
}

// Cardholder reads a cardholder by Stripe's id.
func (c *Client) Cardholder(ctx context.Context, id string) (issuer.Cardholder, error) {
	ch, err := c.sc.V1IssuingCardholders.Retrieve(ctx, id, nil)
	if err != nil {
		return issuer.Cardholder{}, fail("read a cardholder", err, nil)
	}
	return cardholder(ch), nil
}

func cardholder(ch *stripe.IssuingCardholder) issuer.Cardholder {
	return issuer.Cardholder{
		ID: ch.ID, Reference: ch.Metadata[Reference],
		Active: ch.Status == stripe.IssuingCardholderStatusActive, CreatedAt: time.Unix(ch.Created, 0).UTC(),
	}
}

// IssueCard creates an active USD virtual card for r.CardholderID,
// idempotently on r.Reference. It never asks for the card's number or CVC
// (PCI DSS 3.3.1.2: they stay at Stripe): the Secrets are empty, and the
// cardholder sees them through a RevealSession. r.Amount is our ledger's:
// nothing moves at Stripe. A card of another brand than the account's is
// ErrDeclined, asked of nobody.
func (c *Client) IssueCard(ctx context.Context, r issuer.CardRequest) (issuer.Card, issuer.Secrets, error) {
	if r.Brand != "" && r.Brand != c.brand {
		return issuer.Card{}, issuer.Secrets{}, fmt.Errorf("%w: Stripe issues %s cards only", issuer.ErrDeclined, c.brand)
	}
	p := &stripe.IssuingCardCreateParams{
		Cardholder: stripe.String(r.CardholderID),
		Currency:   stripe.String(string(stripe.CurrencyUSD)),
		Type:       stripe.String(string(stripe.IssuingCardTypeVirtual)),
		Status:     stripe.String(string(stripe.IssuingCardStatusActive)),
		Metadata:   map[string]string{Reference: r.Reference},
	}
	p.SetIdempotencyKey("card-" + r.Reference)
	created, err := c.sc.V1IssuingCards.Create(ctx, p)
	if err != nil {
		return issuer.Card{}, issuer.Secrets{}, fail("create a card", err, issuer.ErrDeclined)
	}
	return c.card(created), issuer.Secrets{}, nil
}

// EphemeralKeyVersion is the Stripe-Version of the ephemeral keys of
// Issuing Elements: Stripe asks for 2020-03-02 or later, and Stripe.js
// reads a key of this version.
const EphemeralKeyVersion = "2020-03-02"

// IssuerName is how a RevealSession names Stripe.
const IssuerName = "stripe"

// RevealSession creates an ephemeral key for Stripe's card cardID from
// the nonce Stripe.js made in the cardholder's browser (Issuing Elements):
// the browser reads the number and CVC from Stripe with it, and they never
// reach us. Stripe requires an explicit Stripe-Version for ephemeral keys.
// A key is not idempotent (each nonce is single-use): a lost answer is
// asked again with a new nonce.
func (c *Client) RevealSession(ctx context.Context, cardID, nonce string) (issuer.RevealSession, error) {
	p := &stripe.EphemeralKeyCreateParams{
		IssuingCard:   stripe.String(cardID),
		Nonce:         stripe.String(nonce),
		StripeVersion: stripe.String(EphemeralKeyVersion),
	}
	p.Headers = http.Header{"Stripe-Version": {EphemeralKeyVersion}}
	k, err := c.sc.V1EphemeralKeys.Create(ctx, p)
	if err != nil {
		return issuer.RevealSession{}, fail("create an ephemeral key", err, issuer.ErrDeclined)
	}
	if k.Secret == "" {
		return issuer.RevealSession{}, fmt.Errorf("%w: Stripe gave an ephemeral key without its secret", issuer.ErrUnavailable)
	}
	return issuer.RevealSession{
		Issuer: IssuerName, IssuerCardID: cardID, EphemeralKeySecret: k.Secret, ExpiresAt: time.Unix(k.Expires, 0).UTC(),
	}, nil
}

// Card reads a card by Stripe's id.
func (c *Client) Card(ctx context.Context, id string) (issuer.Card, error) {
	sc, err := c.sc.V1IssuingCards.Retrieve(ctx, id, nil)
	if err != nil {
		return issuer.Card{}, fail("read a card", err, nil)
	}
	return c.card(sc), nil
}

// FundCard moves nothing: a Stripe card spends the platform's Issuing
// balance, as far as our approvals let it.
func (c *Client) FundCard(_ context.Context, m issuer.Movement) (issuer.Card, error) {
	return ledgered(m.CardID), nil
}

// WithdrawCard moves nothing, as FundCard.
func (c *Client) WithdrawCard(_ context.Context, m issuer.Movement) (issuer.Card, error) {
	return ledgered(m.CardID), nil
}

// PostCard moves nothing: Stripe recorded its authorizations and
// transactions itself, and their events told us (issuer.Reported).
func (c *Client) PostCard(ctx context.Context, p issuer.Posting) (issuer.Card, error) {
	return issuer.Reported.PostCard(ctx, p)
}

// Acknowledge does nothing: the 2xx answer to Stripe's event acknowledged
// it.
func (c *Client) Acknowledge(ctx context.Context, eventID string) error {
	return issuer.Reported.Acknowledge(ctx, eventID)
}

// FreezeCard makes the card inactive: Stripe declines its authorizations
// without asking us.
func (c *Client) FreezeCard(ctx context.Context, id string) (issuer.Card, error) {
	return c.setStatus(ctx, id, stripe.IssuingCardStatusInactive)
}

// UnfreezeCard makes the card active again.
func (c *Client) UnfreezeCard(ctx context.Context, id string) (issuer.Card, error) {
	return c.setStatus(ctx, id, stripe.IssuingCardStatusActive)
}

// TerminateCard cancels the card for good. Stripe held none of its
// balance: the amount owed back is 0 (our ledger refunds ours). A card
// already canceled is answered as it is.
func (c *Client) TerminateCard(ctx context.Context, id string) (issuer.Card, int64, error) {
	card, err := c.setStatus(ctx, id, stripe.IssuingCardStatusCanceled)
	if errors.Is(err, issuer.ErrCardState) && card.Status == issuer.CardTerminated {
		return card, 0, nil
	}
	return card, 0, err
}

// setStatus updates card id's status to to. Stripe refuses to change a
// canceled card: that is ErrCardState, with the card as it is.
func (c *Client) setStatus(ctx context.Context, id string, to stripe.IssuingCardStatus) (issuer.Card, error) {
	sc, err := c.sc.V1IssuingCards.Update(ctx, id, &stripe.IssuingCardUpdateParams{Status: stripe.String(string(to))})
	if err == nil {
		return c.card(sc), nil
	}
	var se *stripe.Error
	if !errors.As(err, &se) || se.HTTPStatusCode != http.StatusBadRequest {
		return issuer.Card{}, fail("set a card's status", err, nil)
	}
	now, rerr := c.Card(ctx, id)
	if rerr != nil {
		return issuer.Card{}, rerr
	}
	if now.Status == issuer.CardTerminated {
		return now, fmt.Errorf("%w: card %s is canceled at Stripe", issuer.ErrCardState, id)
	}
	return issuer.Card{}, fail("set a card's status", err, nil)
}

// card is Stripe's card as the issuer's.
func (c *Client) card(sc *stripe.IssuingCard) issuer.Card {
	out := ledgered(sc.ID)
	out.Reference = sc.Metadata[Reference]
	if sc.Cardholder != nil {
		out.CardholderID = sc.Cardholder.ID
	}
	out.Brand = brand(sc.Brand)
	out.Last4, out.ExpiryMonth, out.ExpiryYear = sc.Last4, int(sc.ExpMonth), int(sc.ExpYear)
	out.Status = status(sc.Status)
	out.CreatedAt = time.Unix(sc.Created, 0).UTC()
	c.remember(sc.ID, out.Reference)
	return out
}

// ledgered is a card of Stripe's whose balance is our ledger's.
func ledgered(id string) issuer.Card {
	return issuer.Card{ID: id, BalanceUnknown: true}
}

// brand is our name of Stripe's card brand ("Visa", "Mastercard").
func brand(b string) issuer.Brand {
	return issuer.Brand(strings.ToUpper(b))
}

// status is the issuer's status of Stripe's: inactive is frozen.
func status(s stripe.IssuingCardStatus) issuer.CardStatus {
	switch s {
	case stripe.IssuingCardStatusActive:
		return issuer.CardActive
	case stripe.IssuingCardStatusCanceled:
		return issuer.CardTerminated
	}
	return issuer.CardFrozen
}

// CardReference returns our card id that Stripe's card id names: from the
// card's metadata, read from Stripe once per process; ErrNotFound for a
// card without one, which is none of ours (remembered too).
func (c *Client) CardReference(ctx context.Context, id string) (string, error) {
	c.mu.Lock()
	ref, ok := c.references[id]
	c.mu.Unlock()
	if !ok {
		card, err := c.Card(ctx, id)
		if err != nil {
			return "", err
		}
		ref = card.Reference
		c.remember(id, ref)
	}
	if ref == "" {
		return "", fmt.Errorf("%w: card %s has no %s in its metadata", issuer.ErrNotFound, id, Reference)
	}
	return ref, nil
}

// remember keeps that Stripe's card id is our card ref ("": none of ours;
// a card's metadata is ours to set, and we never change it).
func (c *Client) remember(id, ref string) {
	c.mu.Lock()
	c.references[id] = ref
	c.mu.Unlock()
}

// fail is the issuer's error for a failed call to Stripe: ErrNotFound for
// a 404, definitive (a create's ErrDeclined) for Stripe's other refusals
// of the request (400, 402), ErrUnavailable otherwise (no answer, 401,
// 403, 409, 429, 5xx), which says nothing of the outcome. Stripe's message
// is kept in the text, never a card's number (no request carries one).
func fail(what string, err error, definitive error) error {
	var se *stripe.Error
	if !errors.As(err, &se) {
		return fmt.Errorf("%w: %s: %v", issuer.ErrUnavailable, what, err)
	}
	msg := fmt.Sprintf("%s: Stripe answered %d %s: %s", what, se.HTTPStatusCode, se.Type, se.Msg)
	switch {
	case se.HTTPStatusCode == http.StatusNotFound:
		return fmt.Errorf("%w: %s", issuer.ErrNotFound, msg)
	case definitive != nil && (se.HTTPStatusCode == http.StatusBadRequest || se.HTTPStatusCode == http.StatusPaymentRequired):
		return fmt.Errorf("%w: %s", definitive, msg)
	}
	return fmt.Errorf("%w: %s", issuer.ErrUnavailable, msg)
}
