package cards

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"payments/pkg/customers"
	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/field"
	"payments/pkg/idempotency"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/kyc"
	"payments/pkg/vault"
	"payments/pkg/wallets"
)

// IssueInput is the body of POST /cards.
type IssueInput struct {
	CustomerID string          `json:"customer_id"`
	Brand      string          `json:"brand"`
	Amount     json.RawMessage `json:"amount"`
}

// validID reports whether id can name one of our records.
func validID(id string) bool { return ids.IsUUID(id) }

// parseBrand reads a brand in any case; empty is VISA.
func parseBrand(s string) (Brand, error) {
	switch b := Brand(strings.ToUpper(strings.TrimSpace(s))); b {
	case "":
		return Visa, nil
	case Visa, Mastercard:
		return b, nil
	}
	return "", field.Invalid("brand", "must be VISA or MASTERCARD")
}

// parseAmount reads a USD amount of at least 1 with at most 2 decimals.
func parseAmount(raw json.RawMessage) (int64, error) {
	if len(raw) == 0 {
		return 0, field.Invalid("amount", "is required")
	}
	n, err := money.ParseAmount(raw, Currency)
	if err != nil {
		return 0, field.Invalid("amount", err.Error())
	}
	return n, nil
}

// Issue issues a card to a customer of the company, funded with in.Amount
// from the USD wallet. The checks, in order: the body (400 naming the
// field), the customer (ErrCustomerNotFound), its KYC
// (ErrCustomerNotVerified), the USD wallet (wallets.ErrNoUSDWallet), a
// free slot (ErrNoSlots), the wallet covering the issuance fee and the
// amount (wallets.ErrInsufficientWalletBalance). Then the acceptance is
// written, and the issuer asked: the card answered is ACTIVE, FAILED
// (refunded) or, when the issuer could not answer, PENDING, which the
// sweeper finishes.
func (s *Service) Issue(ctx context.Context, companyID string, in IssueInput) (Card, error) {
	if e, ok := idempotency.Replaying(ctx); ok {
		return s.replayIssue(ctx, companyID, e)
	}
	if s.Issuer == nil {
		return Card{}, ErrNoIssuer
	}
	customerID := strings.TrimSpace(in.CustomerID)
	if customerID == "" {
		return Card{}, field.Invalid("customer_id", "is required")
	}
	brand, err := parseBrand(in.Brand)
	if err != nil {
		return Card{}, err
	}
	amount, err := parseAmount(in.Amount)
	if err != nil {
		return Card{}, err
	}
	var customer customers.Customer
	if validID(customerID) {
		customer, err = s.Customers.Get(ctx, companyID, customerID)
	} else {
		err = customers.ErrNotFound
	}
	switch {
	case errors.Is(err, customers.ErrNotFound):
		return Card{}, ErrCustomerNotFound
	case err != nil:
		return Card{}, fmt.Errorf("cards: read customer: %w", err)
	case !customer.IsActive || customer.KYCStatus != kyc.Verified:
		return Card{}, ErrCustomerNotVerified
	}
	w, err := s.usdWallet(ctx, companyID)
	if err != nil {
		return Card{}, err
	}
	slots, err := s.Companies.CardSlots(ctx, companyID)
	if err != nil {
		return Card{}, fmt.Errorf("cards: read card slots: %w", err)
	}
	used, err := s.Store.SlotsUsed(ctx, companyID)
	if err != nil {
		return Card{}, fmt.Errorf("cards: read slots used: %w", err)
	}
	if used >= slots {
		return Card{}, ErrNoSlots
	}
	fee, err := s.fee(ctx, companyID, fees.TypeCardIssuance, amount)
	if err != nil {
		return Card{}, err
	}
	if w.PayoutAvailable < amount+fee {
		return Card{}, wallets.ErrInsufficientWalletBalance
	}
	holder, err := s.Customers.Cardholder(ctx, customer)
	if err != nil {
		return Card{}, fmt.Errorf("%w: %w", ErrIssuerUnavailable, err)
	}

	now := s.now()
	card := Card{
		ID: ids.NewV7(now), CompanyID: companyID, CustomerID: customer.ID, Brand: brand, Status: Pending,
		CreatedAt: now, UpdatedAt: now,
	}
	tx := Transaction{
		ID: ids.NewV7(now), CompanyID: companyID, CardID: card.ID, CustomerID: customer.ID, WalletID: w.ID,
		Type: TxFunding, Status: TxProcessing, Amount: amount, Fee: fee, WalletDelta: -amount, Issuance: true,
		Description: "Initial card funding", CreatedAt: now,
	}
	entries := []wallets.Transaction{entry(tx, wallets.TypeTransfer, -amount, ids.NewV7(now), now)}
	if fee > 0 {
		tx.FeeEntryID = ids.NewV7(now)
		entries = append(entries, entry(tx, wallets.TypeFee, -fee, tx.FeeEntryID, now))
	}
	err = s.Store.Accept(ctx, Accept{
		New: true, Slots: slots, Card: card, Tx: tx,
		Wallet: wallets.Adjustment{Payout: -(amount + fee)}, Entries: entries, Now: now,
	})
	if err != nil {
		return Card{}, err
	}
	slog.InfoContext(ctx, "card issuance accepted", "company_id", companyID, "card_id", card.ID,
		"customer_id", customer.ID, "amount", amount, "fee", fee)
	return s.finishIssuance(ctx, card, tx, holder)
}

// finishIssuance asks the issuer for the card of an accepted issuance
// (idempotently, on our card id) and settles it: ACTIVE with its balance,
// or FAILED with the fee and the funding refunded; a card terminated while
// PENDING gets no card at the issuer, and its issuance fails. Whatever
// happens after the acceptance, the card is answered as it stands: an
// issuer that cannot answer, or a settlement that cannot be written, leaves
// it PENDING for the sweeper.
func (s *Service) finishIssuance(ctx context.Context, card Card, tx Transaction, holder string) (Card, error) {
	ic, secrets, err := s.Issuer.IssueCard(ctx, issuer.CardRequest{
		Reference: card.ID, CardholderID: holder, Brand: issuer.Brand(card.Brand), Amount: tx.Amount,
	})
	if err != nil && !definitive(err) {
		slog.WarnContext(ctx, "card issuance not answered: the card stays PENDING for the sweeper", "card_id", card.ID, "error", err)
		return card, nil
	}
	if err == nil && card.Status == Terminated {
		if _, _, terr := s.Issuer.TerminateCard(ctx, ic.ID); terr != nil {
			slog.WarnContext(ctx, "close the card issued for a terminated card; the sweeper will", "card_id", card.ID, "error", terr)
			return card, nil
		}
		err = fmt.Errorf("%w: the card was terminated before it was issued", issuer.ErrDeclined)
	}
	now := s.now()
	st := Settle{Tx: tx, FromStatus: Pending, Now: now}
	st.Tx.CompletedAt = &now
	settled := card
	if err != nil {
		st.Tx.Status, st.Tx.WalletDelta, st.Tx.Error = TxFailed, 0, issuerReason(err)
		st.Wallet, st.Entries = credit(tx, wallets.TypeRefund, tx.Amount+tx.Fee, now)
		if card.Status == Pending {
			st.NewStatus, st.ReleaseSlot = Failed, true
			settled.Status = Failed
		}
	} else {
		issued, err := s.seal(ctx, card.CompanyID, card.ID, ic, secrets)
		if err != nil {
			slog.ErrorContext(ctx, "seal a new card's secrets; the sweeper will ask again", "card_id", card.ID, "error", err)
			return card, nil
		}
		st.Tx.Status, st.Tx.CardDelta, st.CardChange = TxSuccess, tx.Amount, tx.Amount
		st.NewStatus, st.Issued = Active, &issued
		settled.Status, settled.Balance, settled.IssuerCardID = Active, tx.Amount, issued.IssuerCardID
		settled.Last4, settled.ExpiryMonth, settled.ExpiryYear = issued.Last4, issued.ExpiryMonth, issued.ExpiryYear
		settled.Sealed = RefsOf(issued.Number, issued.CVV)
	}
	settled.UpdatedAt = now
	ev, err := events.Build(card.CompanyID, createdEvent(settled, st.Tx), now)
	if err != nil {
		return card, nil
	}
	st.Events = []events.Event{ev}
	if err := s.Store.Settle(ctx, st); err != nil {
		slog.WarnContext(ctx, "settle a card issuance; the sweeper will", "card_id", card.ID, "error", err)
		if stored, rerr := s.Store.Card(ctx, card.CompanyID, card.ID); rerr == nil {
			return stored, nil
		}
		return card, nil
	}
	slog.InfoContext(ctx, "card issuance settled", "card_id", card.ID, "status", settled.Status)
	s.publish(ctx, st.Events)
	return settled, nil
}

// seal seals the secrets the issuer gave for card id of companyID, each
// bound to the company, the card and its field. An issuer that gives none
// (a Stripe card: its number and CVC stay at Stripe, shown through reveal
// sessions) leaves nothing to seal, and the card is stored without a
// sealed attribute.
func (s *Service) seal(ctx context.Context, companyID, id string, ic issuer.Card, secrets issuer.Secrets) (Issued, error) {
	issued := Issued{IssuerCardID: ic.ID, Last4: ic.Last4, ExpiryMonth: ic.ExpiryMonth, ExpiryYear: ic.ExpiryYear}
	if secrets == (issuer.Secrets{}) {
		return issued, nil
	}
	number, err := s.Vault.Seal(ctx, []byte(secrets.Number), vault.CardField(companyID, id, vault.FieldNumber))
	if err != nil {
		return Issued{}, fmt.Errorf("cards: seal the card number: %w", err)
	}
	cvv, err := s.Vault.Seal(ctx, []byte(secrets.CVV), vault.CardField(companyID, id, vault.FieldCVC))
	if err != nil {
		return Issued{}, fmt.Errorf("cards: seal the CVV: %w", err)
	}
	issued.Number, issued.CVV = number, cvv
	return issued, nil
}

// issuerReason words an issuer's definitive refusal for a card
// transaction's error.
func issuerReason(err error) string {
	switch {
	case errors.Is(err, issuer.ErrDeclined):
		return "declined by the card issuer"
	case errors.Is(err, issuer.ErrInsufficientFunds):
		return "insufficient card balance at the card issuer"
	case errors.Is(err, issuer.ErrCardState):
		return "the card issuer's card does not allow it"
	case errors.Is(err, issuer.ErrNotFound):
		return "unknown to the card issuer"
	}
	return "card issuer error"
}

// createdEvent is the payload of card.created for card and its initial
// funding tx, as settled.
func createdEvent(card Card, tx Transaction) events.CardCreatedData {
	status := string(tx.Status)
	if tx.Status == TxProcessing {
		status = string(Pending)
	}
	issuance := tx.FeeEntryID
	if issuance == "" {
		issuance = tx.ID
	}
	return events.CardCreatedData{
		Card: events.CreatedCard{
			ID: card.ID, CustomerID: card.CustomerID, Brand: string(card.Brand), MaskedNumber: card.MaskedPAN(),
			Balance: money.JSON(card.Balance, Currency), Currency: Currency,
		},
		CardIssuance: events.CardOperation{
			Status: status, TransactionID: issuance, Amount: money.JSON(tx.Fee, Currency), Description: "Card issuance fee",
		},
		CardFund: events.CardOperation{
			Status: status, TransactionID: tx.ID, Amount: money.JSON(tx.Amount, Currency), Description: tx.Description,
		},
	}
}
