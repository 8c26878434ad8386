package fx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/idempotency"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// ConversionSources are the currencies a conversion converts into USD:
// XAF or XOF to USD is the only corridor (spec §4.8).
var ConversionSources = []string{"XAF", "XOF"}

// Wallets reads a company's wallets; *wallets.Service is one.
type Wallets interface {
	// Get returns a wallet of the company; wallets.ErrNotFound when the
	// company has none with that id.
	Get(ctx context.Context, companyID, walletID string) (wallets.Wallet, error)
	// USDWallet returns the company USD wallet;
	// wallets.ErrUSDWalletNotFound when it has none.
	USDWallet(ctx context.Context, companyID string) (wallets.Wallet, error)
}

// Movement is money moved between two wallets of a company at a quoted
// rate, in one transaction: a conversion or a deposit.
type Movement struct {
	// ID is the conversion_id or deposit_id: the Reference of both entries.
	ID        string
	CompanyID string
	// Rate is the version the movement is priced at: the transaction
	// checks that it is still its pair's current version.
	Rate Rate
	// Source is the TRANSFER entry that debits the payin balance of its
	// wallet (Delta < 0); Destination the one that credits the payout
	// balance of its wallet (Delta > 0). The store sets their balances
	// before and after.
	Source, Destination wallets.Transaction
	// Event reports the movement; it is committed with it.
	Event events.Event
	Now   time.Time
	// Receipt, when set, encodes the answer of the movement from both
	// wallets after it, recorded with the effect for a retry to answer
	// from.
	Receipt func(source, destination wallets.Wallet) ([]byte, error)
}

// Mover writes movements.
type Mover interface {
	// Move writes m in one transaction: both wallets adjusted (on the
	// condition that they are active and that the source's payin balance
	// covers the debit), both entries, the check that m.Rate is still
	// current and the event. A credit to the payout balance of a USD
	// wallet first pays the company's pending debts, in the same
	// transaction. It returns both wallets after the move: ErrRateChanged
	// when the rate changed, wallets.ErrInsufficientWalletBalance when the
	// source's payin balance is short, wallets.ErrInactive or
	// wallets.ErrNotFound.
	Move(ctx context.Context, m Movement) (source, destination wallets.Wallet, err error)
}

// Publisher queues committed events; *outbox.Publisher is one.
type Publisher interface {
	Publish(ctx context.Context, evs ...events.Event) error
}

// Converter moves money between a company's wallets at its exchange
// rates: the conversions of POST /partner/wallets/xaf-usd-conversion (and
// their previews) and the deposits of POST /wallets/deposit.
type Converter struct {
	// Rates reads the rates, prices the fees and tells the time.
	Rates   *Service
	Wallets Wallets
	Store   Mover
	// Events queues the movements' events after their commit; nil leaves
	// them to the sweeper.
	Events Publisher
}

// NewConverter returns the Converter of rates, moving money between
// wallets through store, or an error naming a missing dependency. events
// may be nil: the sweeper then publishes the movements' events.
func NewConverter(rates *Service, wallets Wallets, store Mover, events Publisher) (*Converter, error) {
	switch {
	case rates == nil:
		return nil, errors.New("fx: no Rates to build the converter")
	case wallets == nil:
		return nil, errors.New("fx: no Wallets to build the converter")
	case store == nil:
		return nil, errors.New("fx: no Store to build the converter")
	}
	return &Converter{Rates: rates, Wallets: wallets, Store: store, Events: events}, nil
}

// now returns the current time at the precision timestamps are stored
// with.
func (c *Converter) now() time.Time { return timestamp.Of(c.Rates.Now()) }

// ConversionInput is the body of POST /partner/wallets/xaf-usd-conversion
// and of POST /partner/wallets/preview-conversion.
type ConversionInput struct {
	SourceWalletID string          `json:"source_wallet_id"`
	Amount         json.RawMessage `json:"amount"`
	// ExchangeRateID, when set, is the rate version the client was quoted:
	// the conversion runs at it or not at all (ErrRateChanged). When it is
	// not set, the conversion runs at the current version, checked the
	// same way.
	ExchangeRateID string `json:"exchangeRateId"`
}

// Conversion is a conversion of Quote.Amount from the payin balance of
// Source into USD on the payout balance of USD, made or previewed.
type Conversion struct {
	// ID is the conversion_id; empty for a preview.
	ID string
	// Source and USD are the wallets after the conversion, or as a
	// preview expects them to be after it.
	Source, USD wallets.Wallet
	// Quote prices it: the fee is in USD, on the converted amount.
	Quote Quote
}

// PreviewConversion checks and prices in as Convert does, moving nothing.
// The USD wallet it returns is credited with the net amount: a conversion
// may pay pending debts out of it first, which a preview does not count.
func (c *Converter) PreviewConversion(ctx context.Context, companyID string, in ConversionInput) (Conversion, error) {
	src, usd, q, err := c.priceConversion(ctx, companyID, in)
	if err != nil {
		return Conversion{}, err
	}
	now := c.now()
	return Conversion{
		Source: src.Adjusted(wallets.Adjustment{Payin: -q.Amount}, now),
		USD:    usd.Adjusted(wallets.Adjustment{Payout: q.Net}, now),
		Quote:  q,
	}, nil
}

// Convert debits the amount from the payin balance of an active XAF or XOF
// wallet of the company and credits the converted amount less the
// CONVERSION fee (in USD, on the converted amount) to the payout balance
// of its active USD wallet, in one transaction at the quoted rate version.
// The USD wallet's TRANSFER entry records the converted amount, the fee
// and the net it credits.
func (c *Converter) Convert(ctx context.Context, companyID string, in ConversionInput) (Conversion, error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		return idempotency.DecodeReceipt[Conversion](e)
	}
	src, usd, q, err := c.priceConversion(ctx, companyID, in)
	if err != nil {
		return Conversion{}, err
	}
	now := c.now()
	id := ids.NewV7(now)
	credit := transfer(id, usd, wallets.Payout, q.Net, now)
	credit.Amount, credit.AmountWithFee, credit.FeeAmount = q.Converted, q.Converted, q.Fee
	ev, err := events.Build(companyID, events.WalletConversionCompletedData{
		ConversionID: id, SourceWalletID: src.ID, USDWalletID: usd.ID,
		Amount: money.JSON(q.Amount, src.Currency), Currency: src.Currency,
		Rate: json.Number(q.Rate.Value.String()), ExchangeRateID: q.Rate.ID,
		ConvertedAmount: money.JSON(q.Converted, usd.Currency), FeeAmount: money.JSON(q.Fee, usd.Currency),
		CreditedAmount: money.JSON(q.Net, usd.Currency), CompletedAt: timestamp.Format(now),
	}, now)
	if err != nil {
		return Conversion{}, fmt.Errorf("fx: convert: %w", err)
	}
	src, usd, err = c.move(ctx, Movement{
		ID: id, CompanyID: companyID, Rate: q.Rate,
		Source: transfer(id, src, wallets.Payin, -q.Amount, now), Destination: credit,
		Event: ev, Now: now,
		Receipt: func(src, usd wallets.Wallet) ([]byte, error) {
			return idempotency.EncodeReceipt(Conversion{ID: id, Source: src, USD: usd, Quote: q})
		},
	})
	if err != nil {
		return Conversion{}, err
	}
	return Conversion{ID: id, Source: src, USD: usd, Quote: q}, nil
}

// priceConversion checks in, in this order: the source wallet (required,
// the company's, XAF or XOF, active), the amount (at least 1, covered by
// the payin balance), the USD wallet (present, active), the rate (current
// at in.ExchangeRateID, when set) and what the conversion credits (above
// 0). It returns the source, the USD wallet and the quote.
func (c *Converter) priceConversion(ctx context.Context, companyID string, in ConversionInput) (src, usd wallets.Wallet, q Quote, err error) {
	if in.SourceWalletID == "" {
		return src, usd, q, field.Invalid("source_wallet_id", "is required")
	}
	if src, err = c.wallet(ctx, companyID, in.SourceWalletID, "source_wallet_id"); err != nil {
		return src, usd, q, err
	}
	if !slices.Contains(ConversionSources, src.Currency) {
		return src, usd, q, field.Invalid("source_wallet_id", "must be an XAF or XOF wallet: XAF or XOF to USD is the only corridor")
	}
	amount, err := money.ParseAmount(in.Amount, src.Currency)
	if err != nil {
		return src, usd, q, field.Invalid("amount", err.Error())
	}
	if src.PayinBalance < amount {
		return src, usd, q, wallets.ErrInsufficientWalletBalance
	}
	usd, err = c.Wallets.USDWallet(ctx, companyID)
	switch {
	case errors.Is(err, wallets.ErrUSDWalletNotFound):
		return src, usd, q, wallets.ErrNoUSDWallet
	case err != nil:
		return src, usd, q, fmt.Errorf("fx: read the USD wallet: %w", err)
	case !usd.IsActive:
		return src, usd, q, wallets.ErrInactive
	}
	r, err := c.rateAt(ctx, companyID, src.Currency, usd.Currency, in.ExchangeRateID, "exchangeRateId")
	if err != nil {
		return src, usd, q, err
	}
	q, err = c.Rates.price(ctx, r, amount, FeeInDestination)
	switch {
	case errors.Is(err, money.ErrOutOfRange):
		return src, usd, q, field.Invalid("amount", err.Error())
	case err != nil:
		return src, usd, q, err
	}
	if q.Net <= 0 {
		return src, usd, q, field.Invalid("amount", "is too small: it converts to nothing once the fee is taken")
	}
	return src, usd, q, nil
}

// wallet returns wallet id of the company, active, for the request field
// that names it: a wallet the company does not have is
// wallets.ErrNotFound, an inactive one wallets.ErrInactive, both on field.
func (c *Converter) wallet(ctx context.Context, companyID, id, name string) (wallets.Wallet, error) {
	w, err := c.Wallets.Get(ctx, companyID, id)
	switch {
	case errors.Is(err, wallets.ErrNotFound):
		return w, field.On(err, name)
	case err != nil:
		return w, fmt.Errorf("fx: read wallet %s: %w", id, err)
	case !w.IsActive:
		return w, field.On(wallets.ErrInactive, name)
	}
	return w, nil
}

// rateAt returns the company's current rate of from → to, on the
// condition that it is version id when id is set: ErrNoRate when the pair
// has no rate, ErrRateChanged when id is an earlier version of the pair,
// and a 400 naming field when id is no version of the company's or one of
// another pair.
func (c *Converter) rateAt(ctx context.Context, companyID, from, to, id, name string) (Rate, error) {
	unknown := field.Invalid(name, "names no exchange rate of the company")
	if id != "" && !ids.IsUUID(id) {
		return Rate{}, unknown
	}
	cur, err := c.Rates.Store.Rate(ctx, companyID, from, to)
	if err != nil && !errors.Is(err, ErrNoRate) {
		return Rate{}, err
	}
	if id == "" || err == nil && cur.ID == id {
		return cur, err
	}
	v, verr := c.Rates.Store.Version(ctx, companyID, id)
	switch {
	case errors.Is(verr, ErrNoRate):
		return Rate{}, unknown
	case verr != nil:
		return Rate{}, verr
	case v.From != from || v.To != to:
		return Rate{}, field.Invalid(name, fmt.Sprintf("is a rate of %s to %s, not of %s to %s, the wallets' currencies", v.From, v.To, from, to))
	case err != nil:
		return Rate{}, err
	}
	return Rate{}, ErrRateChanged
}

// move writes m and then queues its event; what it cannot queue, the
// sweeper will.
func (c *Converter) move(ctx context.Context, m Movement) (source, destination wallets.Wallet, err error) {
	source, destination, err = c.Store.Move(ctx, m)
	if err != nil {
		return source, destination, fmt.Errorf("fx: move %s: %w", m.ID, err)
	}
	if c.Events == nil {
		return source, destination, nil
	}
	if err := c.Events.Publish(ctx, m.Event); err != nil {
		slog.WarnContext(ctx, "publish the movement's event after commit; the sweeper will", "error", err)
	}
	return source, destination, nil
}

// transfer returns the TRANSFER entry of movement id on wallet w that
// moves sub-balance b by delta.
func transfer(id string, w wallets.Wallet, b wallets.SubBalance, delta int64, now time.Time) wallets.Transaction {
	return wallets.Completed(ids.NewV7(now), w, wallets.TypeTransfer, id, b, delta, now)
}
