package wallets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/idempotency"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/providers/bank"
	"payments/pkg/timestamp"
)

// ErrFundingFinal is a confirmation or rejection of a funding that is no
// longer PENDING: it was confirmed or rejected before.
var ErrFundingFinal = errors.New("wallets: funding is already confirmed or rejected")

// ErrFundingAwaited is a funding the bank has not received yet: asked again
// later.
var ErrFundingAwaited = errors.New("wallets: the bank has not received the funding yet")

// FundStore is the persistence of fundings: the FUND wallet transactions
// of the bank transfers companies declare.
type FundStore interface {
	// CreateFunding writes the PENDING entry f (it moves nothing) with
	// the claim of its reference for the company and the lookup of its id,
	// in one transaction; ErrDuplicateReference when the reference is
	// claimed.
	CreateFunding(ctx context.Context, f Transaction) error
	// FundingByReference reads the claim of a funding reference of the
	// company; ErrTransactionNotFound when none claimed it.
	FundingByReference(ctx context.Context, companyID, reference string) (CreditClaim, error)
	// FundingCompany returns the company of funding id, from the lookup;
	// ErrTransactionNotFound when there is none. Only the operator
	// console, which knows the id alone, reads it.
	FundingCompany(ctx context.Context, id string) (string, error)
	// SettleFunding writes f, a PENDING funding made SUCCESS or FAILED, in
	// one transaction on the condition that it is still PENDING
	// (ErrFundingFinal otherwise), with ev. A SUCCESS credits f.Delta to
	// f.Balance of its wallet and records the balances before and after;
	// a credit to the payout balance of a USD wallet first pays the
	// company's pending debts. It returns the entry as written.
	SettleFunding(ctx context.Context, f Transaction, ev events.Event) (Transaction, error)
	// OpenFundings returns up to limit PENDING fundings of every company
	// declared before cutoff (eventually consistent: read each again).
	OpenFundings(ctx context.Context, cutoff time.Time, limit int) ([]Transaction, error)
}

// FundInput is a bank transfer a company declares: the body of POST
// /wallets/fund.
type FundInput struct {
	WalletID string
	// Amount is the amount's JSON value as received: a number of major
	// units, at least 1 (money.ParseAmount).
	Amount string
	// Balance is the sub-balance to credit, payout when empty.
	Balance SubBalance
	// Reference names the transfer, once per company: the same reference
	// with the same wallet, sub-balance and amount is the same funding
	// (answered again, not recorded again); with anything else it is
	// ErrDuplicateReference.
	Reference string
}

// Funding is the answer to a declared transfer.
type Funding struct {
	// Transaction is the funding's FUND entry, as it is now.
	Transaction Transaction
	// Replayed is true when the reference named a funding declared before.
	Replayed bool
}

// Fund records a bank transfer the company declares as a PENDING FUND
// entry of wallet in.WalletID, which moves no money, and tells the bank
// (Bank) to expect it. The wallet is credited only when the funding is
// confirmed: by the bank (CheckFunding) or by the operator console
// (ConfirmFunding). It is idempotent on the reference.
func (s *Service) Fund(ctx context.Context, companyID string, in FundInput) (Funding, error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		t, err := s.store.GetTransaction(ctx, companyID, e.ID)
		if err != nil {
			return Funding{}, fmt.Errorf("wallets: replay funding %s: %w", e.ID, err)
		}
		return Funding{Transaction: t}, nil
	}
	if in.Balance == "" {
		in.Balance = Payout
	}
	switch {
	case in.WalletID == "":
		return Funding{}, field.Invalid("wallet_id", "is required")
	case !ids.IsUUID(in.WalletID):
		return Funding{}, field.Invalid("wallet_id", "must be a UUID")
	case in.Balance != Payin && in.Balance != Payout:
		return Funding{}, field.Invalid("balance", `must be "payin" or "payout"`)
	case in.Amount == "":
		return Funding{}, field.Invalid("amount", "is required")
	}
	if err := checkReference(in.Reference); err != nil {
		return Funding{}, err
	}
	w, err := s.Get(ctx, companyID, in.WalletID)
	if err != nil {
		return Funding{}, err
	}
	amount, err := money.ParseAmount(json.RawMessage(in.Amount), w.Currency)
	if err != nil {
		return Funding{}, field.Invalid("amount", err.Error())
	}
	if !w.IsActive {
		// A retry of a funding declared before the wallet was
		// deactivated is still answered with it.
		if f, err := s.replayFunding(ctx, companyID, in.WalletID, in.Balance, amount, in.Reference); err == nil {
			return f, nil
		}
		return Funding{}, ErrInactive
	}
	now := s.now()
	f := Transaction{
		ID: ids.NewV7(now), CompanyID: companyID, WalletID: w.ID,
		Amount: amount, AmountWithFee: amount, NetAmount: amount, Currency: w.Currency,
		Status: StatusPending, Type: TypeFund, Reference: in.Reference, Balance: in.Balance,
		CreatedAt: now,
	}
	err = s.store.CreateFunding(ctx, f)
	switch {
	case errors.Is(err, ErrDuplicateReference):
		return s.replayFunding(ctx, companyID, in.WalletID, in.Balance, amount, in.Reference)
	case err != nil:
		return Funding{}, fmt.Errorf("wallets: declare funding of %s: %w", w.ID, err)
	}
	if s.Bank != nil {
		// The funding is recorded: a bank that missed it leaves it to
		// the operator console.
		if err := s.Bank.Expect(ctx, transferOf(f)); err != nil {
			slog.ErrorContext(ctx, "tell the bank of a funding; the console can confirm it", "transaction_id", f.ID, "error", err)
		}
	}
	return Funding{Transaction: f}, nil
}

// replayFunding answers a funding whose reference is already claimed: the
// first funding, as it is now, when it was the same one, else
// ErrDuplicateReference.
func (s *Service) replayFunding(ctx context.Context, companyID, walletID string, b SubBalance, amount int64, ref string) (Funding, error) {
	prior, err := s.store.FundingByReference(ctx, companyID, ref)
	if err != nil {
		return Funding{}, fmt.Errorf("wallets: read funding %q: %w", ref, err)
	}
	if prior.WalletID != walletID || prior.Balance != b || prior.Amount != amount {
		return Funding{}, ErrDuplicateReference
	}
	t, err := s.store.GetTransaction(ctx, companyID, prior.TransactionID)
	if err != nil {
		return Funding{}, fmt.Errorf("wallets: read funding %q: %w", ref, err)
	}
	return Funding{Transaction: t, Replayed: true}, nil
}

// ConfirmFunding credits the PENDING funding id, whatever its company
// (operator console), exactly once: ErrFundingFinal when it is confirmed or
// rejected already. by names who confirmed it, for the log.
func (s *Service) ConfirmFunding(ctx context.Context, id, by string) (Transaction, error) {
	return s.decideFunding(ctx, id, StatusSuccess, by)
}

// RejectFunding marks the PENDING funding id FAILED, whatever its company
// (operator console), crediting nothing: ErrFundingFinal when it is
// confirmed or rejected already.
func (s *Service) RejectFunding(ctx context.Context, id, by string) (Transaction, error) {
	return s.decideFunding(ctx, id, StatusFailed, by)
}

func (s *Service) decideFunding(ctx context.Context, id string, to Status, by string) (Transaction, error) {
	if !ids.IsUUID(id) {
		return Transaction{}, ErrTransactionNotFound
	}
	companyID, err := s.store.FundingCompany(ctx, id)
	if err != nil {
		return Transaction{}, err
	}
	f, err := s.funding(ctx, companyID, id)
	if err != nil {
		return Transaction{}, err
	}
	return s.settle(ctx, f, to, by)
}

// CheckFunding asks the bank about the funding id of the company and
// confirms or rejects it by the bank's answer, as the console would. A
// funding decided already is left as it is (nil); one the bank still
// awaits is an error, so that the caller asks again later.
func (s *Service) CheckFunding(ctx context.Context, companyID, id string) error {
	if s.Bank == nil {
		return errors.New("wallets: check funding: no bank is configured")
	}
	f, err := s.funding(ctx, companyID, id)
	if err != nil {
		return err
	}
	if f.Status != StatusPending {
		return nil
	}
	outcome, err := s.Bank.Check(ctx, transferOf(f))
	if err != nil {
		return fmt.Errorf("wallets: ask the bank about funding %s: %w", id, err)
	}
	to := StatusSuccess
	switch outcome {
	case bank.Received:
	case bank.Refused:
		to = StatusFailed
	default:
		return fmt.Errorf("%w: funding %s (%s)", ErrFundingAwaited, id, outcome)
	}
	if _, err := s.settle(ctx, f, to, "bank"); err != nil && !errors.Is(err, ErrFundingFinal) {
		return err
	}
	return nil
}

// funding reads the funding id of the company: ErrTransactionNotFound when
// it is not a FUND entry of the company.
func (s *Service) funding(ctx context.Context, companyID, id string) (Transaction, error) {
	f, err := s.store.GetTransaction(ctx, companyID, id)
	if err != nil {
		return Transaction{}, err
	}
	if f.Type != TypeFund {
		return Transaction{}, ErrTransactionNotFound
	}
	return f, nil
}

// settle moves the funding f, as read, from PENDING to to (SUCCESS or
// FAILED) with its event, and publishes the event.
func (s *Service) settle(ctx context.Context, f Transaction, to Status, by string) (Transaction, error) {
	if f.Status != StatusPending {
		return Transaction{}, ErrFundingFinal
	}
	now := s.now()
	f.Status, f.CompletedAt = to, &now
	data := events.WalletFund{
		TransactionID: f.ID, WalletID: f.WalletID, Reference: f.Reference, Balance: string(f.Balance),
		Amount: money.JSON(f.Amount, f.Currency), Currency: f.Currency, Status: string(to), CompletedAt: timestamp.Format(now),
	}
	var p events.Payload = events.WalletFundFailedData{WalletFund: data}
	if to == StatusSuccess {
		f.Delta = f.Amount
		p = events.WalletFundCompletedData{WalletFund: data}
	}
	ev, err := events.Build(f.CompanyID, p, now)
	if err != nil {
		return Transaction{}, err
	}
	written, err := s.store.SettleFunding(ctx, f, ev)
	switch {
	case errors.Is(err, ErrFundingFinal):
		return Transaction{}, err
	case err != nil:
		return Transaction{}, fmt.Errorf("wallets: settle funding %s: %w", f.ID, err)
	}
	slog.InfoContext(ctx, "funding settled", "company_id", f.CompanyID, "transaction_id", f.ID, "status", to, "by", by)
	s.publish(ctx, ev)
	return written, nil
}

// transferOf returns the bank transfer of funding f.
func transferOf(f Transaction) bank.Transfer {
	return bank.Transfer{
		CompanyID: f.CompanyID, FundingID: f.ID, WalletID: f.WalletID,
		Amount: f.Amount, Currency: f.Currency, Reference: f.Reference,
	}
}
