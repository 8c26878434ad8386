package fx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/idempotency"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// DepositInput is the body of POST /wallets/deposit (spec §4.9).
type DepositInput struct {
	SourceWallet      *DepositSource      `json:"sourceWallet"`
	DestinationWallet *DepositDestination `json:"destinationWallet"`
	ExchangeRate      *DepositRate        `json:"exchangeRate"`
}

// DepositSource is the wallet a deposit debits, and the amount it
// converts, in the wallet's currency.
type DepositSource struct {
	ID     string          `json:"id"`
	Amount json.RawMessage `json:"amount"`
}

// DepositDestination is the wallet a deposit credits.
type DepositDestination struct {
	ID string `json:"id"`
}

// DepositRate names the rate version of the quote (POST
// /company/exchange-rates/convert) a deposit runs at.
type DepositRate struct {
	ExchangeRateID string `json:"exchangeRateId"`
}

// Deposit is a deposit made: Amount and Fee in the source's currency,
// Converted in the destination's, and both wallets after it.
type Deposit struct {
	ID                  string
	Amount, Fee         int64
	Rate                Rate
	Converted           int64
	Source, Destination wallets.Wallet
}

// Total returns what the deposit debited: amount plus fee.
func (d Deposit) Total() int64 { return d.Amount + d.Fee }

// Deposit debits amount plus the CONVERSION fee (in the source's currency,
// on the amount) from the payin balance of one active wallet of the
// company and credits the amount converted at the quoted rate version to
// the payout balance of another, in another currency, in one transaction.
// The source's TRANSFER entry records the amount, the fee and the total
// it debits.
func (c *Converter) Deposit(ctx context.Context, companyID string, in DepositInput) (Deposit, error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		return idempotency.DecodeReceipt[Deposit](e)
	}
	switch {
	case in.SourceWallet == nil:
		return Deposit{}, field.Invalid("sourceWallet", "is required")
	case in.SourceWallet.ID == "":
		return Deposit{}, field.Invalid("sourceWallet.id", "is required")
	case in.DestinationWallet == nil:
		return Deposit{}, field.Invalid("destinationWallet", "is required")
	case in.DestinationWallet.ID == "":
		return Deposit{}, field.Invalid("destinationWallet.id", "is required")
	case in.ExchangeRate == nil:
		return Deposit{}, field.Invalid("exchangeRate", "is required")
	case in.ExchangeRate.ExchangeRateID == "":
		return Deposit{}, field.Invalid("exchangeRate.exchangeRateId", "is required")
	}
	src, err := c.wallet(ctx, companyID, in.SourceWallet.ID, "sourceWallet.id")
	if err != nil {
		return Deposit{}, err
	}
	dst, err := c.wallet(ctx, companyID, in.DestinationWallet.ID, "destinationWallet.id")
	if err != nil {
		return Deposit{}, err
	}
	if dst.Currency == src.Currency {
		return Deposit{}, field.Invalid("destinationWallet.id", "must be a wallet in another currency than the source's: a deposit converts")
	}
	amount, err := money.ParseAmount(in.SourceWallet.Amount, src.Currency)
	if err != nil {
		return Deposit{}, field.Invalid("sourceWallet.amount", err.Error())
	}
	r, err := c.rateAt(ctx, companyID, src.Currency, dst.Currency, in.ExchangeRate.ExchangeRateID, "exchangeRate.exchangeRateId")
	if err != nil {
		return Deposit{}, err
	}
	q, err := c.Rates.price(ctx, r, amount, FeeInSource)
	switch {
	case errors.Is(err, money.ErrOutOfRange):
		return Deposit{}, field.Invalid("sourceWallet.amount", err.Error())
	case err != nil:
		return Deposit{}, err
	case q.Converted <= 0:
		return Deposit{}, field.Invalid("sourceWallet.amount", "is too small: it converts to nothing at the rate")
	}
	converted := q.Converted
	d := Deposit{Amount: q.Amount, Fee: q.Fee, Rate: r, Converted: converted}
	if src.PayinBalance < d.Total() {
		return Deposit{}, wallets.ErrInsufficientWalletBalance
	}

	now := c.now()
	d.ID = ids.NewV7(now)
	debit := transfer(d.ID, src, wallets.Payin, -d.Total(), now)
	debit.Amount, debit.AmountWithFee, debit.FeeAmount, debit.NetAmount = d.Amount, d.Total(), d.Fee, d.Amount
	ev, err := events.Build(companyID, events.WalletDepositCompletedData{
		DepositID: d.ID, SourceWalletID: src.ID, DestinationWalletID: dst.ID,
		Amount: money.JSON(d.Amount, src.Currency), FeeAmount: money.JSON(d.Fee, src.Currency),
		TotalAmount: money.JSON(d.Total(), src.Currency), Currency: src.Currency,
		Rate: json.Number(r.Value.String()), ExchangeRateID: r.ID,
		ConvertedAmount: money.JSON(converted, dst.Currency), DestinationCurrency: dst.Currency, CompletedAt: timestamp.Format(now),
	}, now)
	if err != nil {
		return Deposit{}, fmt.Errorf("fx: deposit: %w", err)
	}
	d.Source, d.Destination, err = c.move(ctx, Movement{
		ID: d.ID, CompanyID: companyID, Rate: r,
		Source: debit, Destination: transfer(d.ID, dst, wallets.Payout, converted, now),
		Event: ev, Now: now,
		Receipt: func(src, dst wallets.Wallet) ([]byte, error) {
			done := d
			done.Source, done.Destination = src, dst
			return idempotency.EncodeReceipt(done)
		},
	})
	if err != nil {
		return Deposit{}, err
	}
	return d, nil
}
