package payments

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"payments/pkg/correlation"
	"payments/pkg/countries"
	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/field"
	"payments/pkg/guideline"
	"payments/pkg/idempotency"
	"payments/pkg/ids"
	"payments/pkg/metrics"
	"payments/pkg/money"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// MaxTextLength bounds external_id, reference_id, purpose and reason, in
// characters.
const MaxTextLength = 255

// Request is a payout (POST /payment/payout) or a collection (POST
// /payment/collect) as received. Empty optional fields are absent.
type Request struct {
	Operator    string
	Country     string
	PhoneNumber string
	// Amount is the amount's JSON value as received: a number in major
	// units, or anything else, which validation refuses.
	Amount      string
	Currency    string
	ExternalID  string
	NotifyURL   string
	ReferenceID string
	Lang        string
	Purpose     string
	// Reason is a short reason; collections only.
	Reason string
}

var (
	phonePattern = regexp.MustCompile(`^[0-9]{8,15}$`)
	langPattern  = regexp.MustCompile(`^[a-z]{2}$`)
)

// validate checks r alone and returns the amount in minor units. The first
// failure is a 400 naming its field, in the order operator, country,
// phone_number, currency, amount, external_id, notify_url, reference_id,
// lang, purpose, reason.
func (s *Service) validate(r Request) (int64, error) {
	switch {
	case r.Operator == "":
		return 0, field.Invalid("operator", "is required")
	case !guideline.IsOperator(r.Operator):
		return 0, field.Invalid("operator", "must be one of "+strings.Join(guideline.Operators(), ", ")+" (lowercase)")
	case r.Country == "":
		return 0, field.Invalid("country", "is required")
	case !countries.IsAlpha2(r.Country):
		return 0, field.Invalid("country", countries.Alpha2Rule)
	case r.PhoneNumber == "":
		return 0, field.Invalid("phone_number", "is required")
	case !phonePattern.MatchString(r.PhoneNumber):
		return 0, field.Invalid("phone_number", "must be 8 to 15 digits: the country code then the local number, without +")
	}
	if c, ok := s.guide.Country(r.Country); ok {
		dial := strings.TrimPrefix(c.PhoneCode, "+")
		if !strings.HasPrefix(r.PhoneNumber, dial) {
			return 0, field.Invalid("phone_number", fmt.Sprintf("must start with the country code %s of %s", dial, r.Country))
		}
	}
	switch {
	case r.Currency == "":
		return 0, field.Invalid("currency", "is required")
	case !money.Supported(r.Currency):
		return 0, field.Invalid("currency", "must be one of "+strings.Join(money.Currencies(), ", "))
	}
	amount, err := money.ParseAmount(json.RawMessage(r.Amount), r.Currency)
	if err != nil {
		return 0, field.Invalid("amount", err.Error())
	}
	if err := checkExternalID(r.ExternalID); err != nil {
		return 0, err
	}
	if err := checkNotifyURL(r.NotifyURL); err != nil {
		return 0, err
	}
	if err := CheckText("reference_id", r.ReferenceID); err != nil {
		return 0, err
	}
	if r.Lang != "" && !langPattern.MatchString(r.Lang) {
		return 0, field.Invalid("lang", "must be a two-letter lowercase language code")
	}
	if err := CheckText("purpose", r.Purpose); err != nil {
		return 0, err
	}
	if err := CheckText("reason", r.Reason); err != nil {
		return 0, err
	}
	return amount, nil
}

// CheckText bounds a free-form field to MaxTextLength characters.
func CheckText(name, value string) error {
	if utf8.RuneCountInString(value) > MaxTextLength {
		return field.Invalid(name, fmt.Sprintf("must be at most %d characters", MaxTextLength))
	}
	return nil
}

// checkExternalID accepts "" (generated) or 1 to 255 printable ASCII
// characters: the external_id becomes part of a DynamoDB key.
func checkExternalID(id string) error {
	if len(id) > MaxTextLength {
		return field.Invalid("external_id", fmt.Sprintf("must be at most %d characters", MaxTextLength))
	}
	for i := 0; i < len(id); i++ {
		if id[i] < 0x20 || id[i] > 0x7e {
			return field.Invalid("external_id", "must be printable ASCII characters")
		}
	}
	return nil
}

// checkNotifyURL accepts "" or an absolute https URL with a host.
func checkNotifyURL(s string) error {
	if s == "" {
		return nil
	}
	if len(s) > 2048 {
		return field.Invalid("notify_url", "must be at most 2048 characters")
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "https" || u.Host == "" || u.User != nil || u.Hostname() == "" {
		return field.Invalid("notify_url", "must be an absolute https URL")
	}
	return nil
}

// Payout accepts a payout for the company (spec §4.14). The checks run in
// this order: the request alone (400 naming the field); a wallet of
// (currency, country) (ErrNoWallet) that is active (wallets.ErrInactive);
// the guideline lists the operator for it (fees.ErrOperatorUnavailable); the fee
// quote; then one transaction reserves amount + fee
// (wallets.ErrInsufficientBalance) and claims the external_id
// (ErrDuplicateExternalID). After the commit one message goes to the
// payouts queue: it submits the payout and carries its event, which the
// worker publishes; if the send fails the sweeper sends the one and
// publishes the other. Once the Service has seen the wallet and the
// company's fee schedule is cached (fees.CachedStore), an acceptance reads
// one item (the wallet), writes one transaction and sends one message. The
// retry of a request whose first run committed its payout but stored no
// answer (idempotency.Replaying) answers that payout as it stands.
func (s *Service) Payout(ctx context.Context, companyID string, r Request) (Payment, error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		return s.Get(ctx, companyID, e.ID)
	}
	r.Reason = "" // not a payout field; the HTTP layer refuses it
	p, w, err := s.prepare(ctx, companyID, TypePayout, r)
	if err != nil {
		return Payment{}, err
	}
	p.EntryID = ids.NewV7(p.CreatedAt)
	reservation := wallets.Transaction{
		ID:            p.EntryID,
		CompanyID:     companyID,
		WalletID:      w.ID,
		Amount:        p.Amount,
		AmountWithFee: p.Total(),
		FeeAmount:     p.Fee,
		NetAmount:     p.Amount,
		Currency:      p.Currency,
		Status:        wallets.StatusPending,
		Type:          wallets.TypeWithdraw,
		Operator:      p.Operator,
		PhoneNumber:   p.PhoneNumber,
		Reference:     p.ExternalID,
		Balance:       wallets.Payout,
		Reserved:      p.Total(),
		PaymentID:     p.ID,
		CreatedAt:     p.CreatedAt,
	}
	ev, err := statusEvent(p, "")
	if err != nil {
		return Payment{}, err
	}
	if err := s.store.CreatePayout(ctx, p, reservation, ev); err != nil {
		return Payment{}, acceptError("payout", err)
	}
	slog.InfoContext(ctx, "payout accepted", "company_id", companyID, "transaction_id", p.ID,
		"amount", p.Amount, "fee", p.Fee, "currency", p.Currency, "operator", p.Operator)
	count(ctx, p, metrics.PayoutsAccepted, metrics.CollectionsAccepted)
	s.enqueueSubmit(ctx, p, ev)
	return p, nil
}

// Collect accepts a collection for the company: the same request as a
// payout plus an optional reason. Nothing is reserved; the wallet of
// (currency, country) must exist because a successful collection credits
// its payin balance with amount − fee. The payment, the external_id claim
// and the payment.collect event are written in one transaction. A replay
// answers as Payout's does.
func (s *Service) Collect(ctx context.Context, companyID string, r Request) (Payment, error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		return s.Get(ctx, companyID, e.ID)
	}
	p, _, err := s.prepare(ctx, companyID, TypeCollection, r)
	if err != nil {
		return Payment{}, err
	}
	if p.Fee >= p.Amount {
		return Payment{}, field.Invalid("amount", fmt.Sprintf("must exceed the collection fee of %s %s",
			money.Format(p.Fee, p.Currency), p.Currency))
	}
	ev, err := events.NewPaymentCollect(companyID, events.PaymentCollectData{
		TransactionID: p.ID,
		ExternalID:    p.ExternalID,
		Status:        string(p.Status),
		Amount:        money.JSON(p.Amount, p.Currency),
		Currency:      p.Currency,
		Country:       p.Country,
		Operator:      p.Operator,
		PhoneNumber:   p.PhoneNumber,
		InitiatedAt:   timestamp.Format(p.CreatedAt),
	}, p.CreatedAt)
	if err != nil {
		return Payment{}, err
	}
	if err := s.store.CreateCollection(ctx, p, ev); err != nil {
		return Payment{}, acceptError("collection", err)
	}
	slog.InfoContext(ctx, "collection accepted", "company_id", companyID, "transaction_id", p.ID,
		"amount", p.Amount, "fee", p.Fee, "currency", p.Currency, "operator", p.Operator)
	count(ctx, p, metrics.PayoutsAccepted, metrics.CollectionsAccepted)
	s.enqueueSubmit(ctx, p, ev)
	return p, nil
}

// WalletLookup returns the company's wallet of (currency, country), or
// ErrNoWallet.
type WalletLookup func(ctx context.Context, companyID, currency, country string) (wallets.Wallet, error)

// PreparePayout runs Payout's checks of r, with the wallet walletOf
// returns, and returns the new PENDING payout, writing nothing: an item of
// a bulk batch. Unlike Payout it keeps r.Reason (a bulk item's reason).
func (s *Service) PreparePayout(ctx context.Context, companyID string, r Request, walletOf WalletLookup) (Payment, error) {
	p, _, err := s.prepareWith(ctx, companyID, TypePayout, r, walletOf)
	return p, err
}

// AcceptedEvent returns the event of p's acceptance: its status update to
// PENDING.
func AcceptedEvent(p Payment) (events.Event, error) { return statusEvent(p, "") }

// EnqueueAll sends the submit message of each payment of ps, accepted
// and due now, on its queue (queueOf: the bulk payouts queue for the items
// of a bulk batch), carrying evs[i], its acceptance's event, when its ID
// is not "": many a call when the queue takes it (SendAll), else one by
// one. The messages not sent are the sweeper's to send (see
// enqueueSubmit); the error says how many.
func (s *Service) EnqueueAll(ctx context.Context, ps []Payment, evs []events.Event) error {
	var queues []Jobs
	bodies := map[Jobs][][]byte{}
	for i, p := range ps {
		var carried []events.Event
		if evs[i].ID != "" {
			carried = evs[i : i+1]
		}
		body, err := jobBody(p, p.NextPollAt, carried)
		if err != nil {
			return err
		}
		q := s.queueOf(p)
		if _, ok := bodies[q]; !ok {
			queues = append(queues, q)
		}
		bodies[q] = append(bodies[q], body)
	}
	var errs []error
	for _, q := range queues {
		if all, ok := q.(interface {
			SendAll(ctx context.Context, bodies [][]byte) error
		}); ok {
			errs = append(errs, all.SendAll(ctx, bodies[q]))
			continue
		}
		for _, b := range bodies[q] {
			errs = append(errs, q.Send(ctx, b, 0))
		}
	}
	return errors.Join(errs...)
}

// prepare runs the checks common to payouts and collections and returns the
// new PENDING payment and its wallet.
func (s *Service) prepare(ctx context.Context, companyID string, typ Type, r Request) (Payment, wallets.Wallet, error) {
	return s.prepareWith(ctx, companyID, typ, r, s.Wallet)
}

// prepareWith is prepare with the wallet walletOf returns.
func (s *Service) prepareWith(ctx context.Context, companyID string, typ Type, r Request, walletOf WalletLookup) (Payment, wallets.Wallet, error) {
	if s.gateway == nil {
		return Payment{}, wallets.Wallet{}, ErrNoOperator
	}
	amount, err := s.validate(r)
	if err != nil {
		return Payment{}, wallets.Wallet{}, err
	}
	w, err := walletOf(ctx, companyID, r.Currency, r.Country)
	if err != nil {
		return Payment{}, wallets.Wallet{}, err
	}
	if !w.IsActive {
		return Payment{}, wallets.Wallet{}, wallets.ErrInactive
	}
	if !s.guide.Supports(r.Country, r.Currency, r.Operator) {
		return Payment{}, wallets.Wallet{}, fees.ErrOperatorUnavailable
	}
	feeType := fees.TypePayout
	if typ == TypeCollection {
		feeType = fees.TypeCollection
	}
	q, err := s.fees.Quote(ctx, companyID, feeType, r.Operator, r.Country, r.Currency, amount)
	if err != nil {
		if errors.Is(err, fees.ErrNoRule) {
			return Payment{}, wallets.Wallet{}, err
		}
		return Payment{}, wallets.Wallet{}, fmt.Errorf("payments: quote fee: %w", err)
	}
	now := s.now()
	p := Payment{
		ID:          ids.NewV7(now),
		CompanyID:   companyID,
		ExternalID:  r.ExternalID,
		Type:        typ,
		Status:      StatusPending,
		Amount:      amount,
		Fee:         q.Fee,
		Currency:    r.Currency,
		Country:     r.Country,
		Operator:    r.Operator,
		PhoneNumber: r.PhoneNumber,
		Reason:      r.Reason,
		Description: r.Purpose,
		ReferenceID: r.ReferenceID,
		Lang:        r.Lang,
		NotifyURL:   r.NotifyURL,
		WalletID:    w.ID,
		Submission:  NotSubmitted,
		NextPollAt:  now,
		CreatedAt:   now,
		UpdatedAt:   now,

		CorrelationID: correlation.ID(ctx),
	}
	if p.ExternalID == "" {
		p.ExternalID = p.ID
	}
	if p.Reason == "" {
		p.Reason = defaultReason(typ)
	}
	return p, w, nil
}

// Wallet reads the company's wallet of (currency, country) by its key: one
// GetItem once the wallet's id is known to the Service, two the first time
// (the pair's claim, then the wallet). ErrNoWallet when there is none. A
// remembered id whose wallet is not found is forgotten, so that the next
// payout reads the claim again rather than trusting the id for ever.
func (s *Service) Wallet(ctx context.Context, companyID, currency, country string) (wallets.Wallet, error) {
	key := companyID + "#" + currency + "#" + country
	id, err := s.walletIDs.Read(ctx, key, func(ctx context.Context) (string, error) {
		return s.wallets.WalletIDFor(ctx, companyID, currency, country)
	})
	if err == nil {
		var w wallets.Wallet
		if w, err = s.wallets.GetWallet(ctx, companyID, id); err == nil {
			return w, nil
		}
		s.walletIDs.Forget(key)
	}
	if errors.Is(err, wallets.ErrNotFound) {
		return wallets.Wallet{}, ErrNoWallet
	}
	return wallets.Wallet{}, fmt.Errorf("payments: read wallet: %w", err)
}

// defaultReason is the reason of a payment whose request gave none.
func defaultReason(t Type) string {
	if t == TypeCollection {
		return "Mobile money collection"
	}
	return "Mobile money payout"
}

// acceptError passes the errors of an acceptance the catalogue knows and
// wraps the others.
func acceptError(what string, err error) error {
	for _, known := range []error{wallets.ErrInsufficientBalance, ErrDuplicateExternalID, wallets.ErrInactive, wallets.ErrNotFound} {
		if errors.Is(err, known) {
			if known == wallets.ErrNotFound {
				return ErrNoWallet
			}
			return known
		}
	}
	return fmt.Errorf("payments: accept %s: %w", what, err)
}

// enqueueSubmit sends the one message of an acceptance: it submits the
// accepted payment and carries the acceptance's event, which the worker
// publishes first. A failure is only logged: the payment expects the
// message at its acceptance, so the sweeper sends it a minute later, and
// publishes the event, still unpublished, after outbox.Grace.
func (s *Service) enqueueSubmit(ctx context.Context, p Payment, ev events.Event) {
	if err := s.sendJob(ctx, p, p.NextPollAt, ev); err != nil {
		slog.WarnContext(ctx, "queue submit; the sweeper will", "company_id", p.CompanyID, "transaction_id", p.ID, "error", err)
	}
}
