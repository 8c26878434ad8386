package moneystore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// ledgerItem is a wallet transaction as stored.
type ledgerItem struct {
	PK            string  `dynamodbav:"PK"`
	SK            string  `dynamodbav:"SK"`
	GSI1PK        string  `dynamodbav:"GSI1PK"`
	GSI1SK        string  `dynamodbav:"GSI1SK"`
	GSI2PK        string  `dynamodbav:"GSI2PK,omitempty"`
	GSI2SK        string  `dynamodbav:"GSI2SK,omitempty"`
	Type          string  `dynamodbav:"type"`
	ID            string  `dynamodbav:"id"`
	CompanyID     string  `dynamodbav:"company_id"`
	WalletID      string  `dynamodbav:"wallet_id"`
	Amount        int64   `dynamodbav:"amount"`
	AmountWithFee int64   `dynamodbav:"amount_with_fee"`
	FeeAmount     int64   `dynamodbav:"fee_amount"`
	NetAmount     int64   `dynamodbav:"net_amount"`
	Currency      string  `dynamodbav:"currency"`
	Status        string  `dynamodbav:"status"`
	TxType        string  `dynamodbav:"tx_type"`
	Category      string  `dynamodbav:"category"`
	Operator      string  `dynamodbav:"operator,omitempty"`
	PhoneNumber   string  `dynamodbav:"phone_number,omitempty"`
	Reference     string  `dynamodbav:"reference"`
	OrderID       string  `dynamodbav:"order_id,omitempty"`
	BalanceBefore *int64  `dynamodbav:"wallet_balance_before"`
	BalanceAfter  *int64  `dynamodbav:"wallet_balance_after"`
	Balance       string  `dynamodbav:"balance"`
	Delta         int64   `dynamodbav:"delta"`
	Reserved      int64   `dynamodbav:"reserved"`
	PaymentID     string  `dynamodbav:"payment_id,omitempty"`
	CreatedAt     string  `dynamodbav:"created_at"`
	CompletedAt   *string `dynamodbav:"completed_at"`
}

// creditRefItem claims a sandbox credit reference for one credit.
type creditRefItem struct {
	PK            string `dynamodbav:"PK"`
	SK            string `dynamodbav:"SK"`
	Type          string `dynamodbav:"type"`
	Reference     string `dynamodbav:"reference"`
	TransactionID string `dynamodbav:"transaction_id"`
	WalletID      string `dynamodbav:"wallet_id"`
	Balance       string `dynamodbav:"balance"`
	Amount        int64  `dynamodbav:"amount"`
}

func newLedgerItem(t wallets.Transaction) ledgerItem {
	it := ledgerItem{
		PK:            schema.CompanyPK(t.CompanyID),
		SK:            schema.LedgerSK(t.ID),
		GSI1PK:        schema.WalletLedgerPK(t.CompanyID, t.WalletID),
		GSI1SK:        schema.LedgerSK(t.ID),
		Type:          schema.KindLedger,
		ID:            t.ID,
		CompanyID:     t.CompanyID,
		WalletID:      t.WalletID,
		Amount:        t.Amount,
		AmountWithFee: t.AmountWithFee,
		FeeAmount:     t.FeeAmount,
		NetAmount:     t.NetAmount,
		Currency:      t.Currency,
		Status:        string(t.Status),
		TxType:        string(t.Type),
		Category:      wallets.Category,
		Operator:      t.Operator,
		PhoneNumber:   t.PhoneNumber,
		Reference:     t.Reference,
		OrderID:       t.OrderID,
		BalanceBefore: t.BalanceBefore,
		BalanceAfter:  t.BalanceAfter,
		Balance:       string(t.Balance),
		Delta:         t.Delta,
		Reserved:      t.Reserved,
		PaymentID:     t.PaymentID,
		CreatedAt:     timestamp.Format(t.CreatedAt),
	}
	if t.CompletedAt != nil {
		s := timestamp.Format(*t.CompletedAt)
		it.CompletedAt = &s
	}
	if t.Type == wallets.TypeFund && t.Status == wallets.StatusPending {
		it.GSI2PK, it.GSI2SK = schema.OpenFundingGSI2PK(t.ID), schema.OpenFundingGSI2SK(it.CreatedAt, t.CompanyID, t.ID)
	}
	return it
}

func (it ledgerItem) transaction() (wallets.Transaction, error) {
	created, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return wallets.Transaction{}, fmt.Errorf("store: ledger entry %s created_at: %w", it.ID, err)
	}
	t := wallets.Transaction{
		ID:            it.ID,
		CompanyID:     it.CompanyID,
		WalletID:      it.WalletID,
		Amount:        it.Amount,
		AmountWithFee: it.AmountWithFee,
		FeeAmount:     it.FeeAmount,
		NetAmount:     it.NetAmount,
		Currency:      it.Currency,
		Status:        wallets.Status(it.Status),
		Type:          wallets.Type(it.TxType),
		Operator:      it.Operator,
		PhoneNumber:   it.PhoneNumber,
		Reference:     it.Reference,
		OrderID:       it.OrderID,
		BalanceBefore: it.BalanceBefore,
		BalanceAfter:  it.BalanceAfter,
		Balance:       wallets.SubBalance(it.Balance),
		Delta:         it.Delta,
		Reserved:      it.Reserved,
		PaymentID:     it.PaymentID,
		CreatedAt:     created,
	}
	if it.CompletedAt != nil {
		c, err := timestamp.Parse(*it.CompletedAt)
		if err != nil {
			return wallets.Transaction{}, fmt.Errorf("store: ledger entry %s completed_at: %w", it.ID, err)
		}
		t.CompletedAt = &c
	}
	return t, nil
}

// GetTransaction reads a ledger entry of the company, strongly consistent.
func (s *Wallets) GetTransaction(ctx context.Context, companyID, id string) (wallets.Transaction, error) {
	var it ledgerItem
	if err := s.db.Get(ctx, "ledger entry "+id, schema.CompanyPK(companyID), schema.LedgerSK(id), &it, wallets.ErrTransactionNotFound); err != nil {
		return wallets.Transaction{}, err
	}
	return it.transaction()
}

// ListTransactions reads page p of the company's ledger entries that match
// q, newest first (ReadPage). The dates of q become a range of sort keys
// (entry ids are UUID v7 of their created_at); a wallet id selects the
// wallet's GSI1 partition (eventually consistent), otherwise the company
// partition is read strongly consistent; type, status and currency are a
// FilterExpression.
func (s *Wallets) ListTransactions(ctx context.Context, companyID string, q wallets.TransactionQuery, p page.Request) (page.Result[wallets.Transaction], error) {
	rows, total, next, err := s.db.ReadPage(ctx, ledgerListing(companyID, q), p)
	if err != nil {
		return page.Result[wallets.Transaction]{}, fmt.Errorf("store: list ledger entries: %w", err)
	}
	return dynamo.PageOf(rows, total, next, ledgerItem.transaction)
}

// ledgerListing is the list of the company's ledger entries that q selects.
func ledgerListing(companyID string, q wallets.TransactionQuery) dynamo.Listing {
	lo, hi := dynamo.TimeRange(schema.LedgerSKPrefix, q.From, q.To)
	l := dynamo.Listing{
		PKAttr: schema.AttrPK, SKAttr: schema.AttrSK, PK: schema.CompanyPK(companyID),
		Prefix: schema.LedgerSKPrefix, Lo: lo, Hi: hi, Consistent: true,
		Filter: ledgerFilter(q),
	}
	if q.WalletID != "" {
		l.Index, l.PKAttr, l.SKAttr = schema.GSI1, schema.AttrGSI1PK, schema.AttrGSI1SK
		l.PK, l.Consistent = schema.WalletLedgerPK(companyID, q.WalletID), false
		l.TableKey = func(id string) (string, string) { return schema.CompanyPK(companyID), schema.LedgerSK(id) }
	}
	return l
}

// ledgerFilter is the FilterExpression of the fields of q that are not
// keys.
func ledgerFilter(q wallets.TransactionQuery) dynamo.Filter {
	var f dynamo.Filter
	if q.Type != "" {
		f.Equal("tx_type", string(q.Type))
	}
	if q.Status != "" {
		f.Equal("status", string(q.Status))
	}
	if q.Currency != "" {
		f.Equal("currency", q.Currency)
	}
	return f
}

// AllTransactions returns every ledger entry of the company, newest first,
// strongly consistent. Only the ledger invariant (wallets.VerifyLedger)
// reads a whole ledger; lists read a page (ListTransactions).
func (s *Wallets) AllTransactions(ctx context.Context, companyID string) ([]wallets.Transaction, error) {
	lo, hi := dynamo.TimeRange(schema.LedgerSKPrefix, time.Time{}, time.Time{})
	items, err := s.query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		KeyConditionExpression: aws.String("PK = :pk AND SK BETWEEN :lo AND :hi"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)},
			":lo": &types.AttributeValueMemberS{Value: lo},
			":hi": &types.AttributeValueMemberS{Value: hi},
		},
		ScanIndexForward: aws.Bool(false),
		ConsistentRead:   aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("store: read ledger: %w", err)
	}
	return dynamo.DecodeAll(items, ledgerItem.transaction)
}

// ApplyChange writes c in one transaction: its posting (post: the wallet
// adjusted, on the condition that no balance goes below 0, and the ledger
// entry with the balances before and after), and the reference claim when
// c.Reference is set. A taken reference is wallets.ErrDuplicateReference;
// a balance that would go below 0, wallets.ErrInsufficientBalance.
//
// A credit to the payout balance of a USD wallet first pays the company's
// pending debts in the same transaction; the wallet returned is the wallet
// after both, the entry is c's.
func (s *Wallets) ApplyChange(ctx context.Context, c wallets.Change) (wallets.Wallet, wallets.Transaction, error) {
	p, err := wallets.NewPosting(c.CompanyID, c.Now, wallets.Leg{WalletID: c.WalletID, Adjust: c.Adjust, Entries: []wallets.Transaction{c.Entry}})
	if err != nil {
		return wallets.Wallet{}, wallets.Transaction{}, err
	}
	var after wallets.Wallet
	var entry wallets.Transaction
	err = s.db.Commit(ctx, "change wallet "+c.WalletID, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		if c.Reference != "" {
			claim, err := attributevalue.MarshalMap(creditRefItem{
				PK: schema.CompanyPK(c.CompanyID), SK: schema.CreditRefSK(c.Reference), Type: schema.KindCreditRef,
				Reference: c.Reference, TransactionID: c.Entry.ID, WalletID: c.WalletID,
				Balance: string(c.Entry.Balance), Amount: c.Entry.Amount,
			})
			if err != nil {
				return nil, fmt.Errorf("store: marshal credit reference: %w", err)
			}
			t.Add(schema.ReferenceItem, s.putNew(claim))
		}
		legs, err := s.post(ctx, t, p)
		if err != nil {
			return nil, err
		}
		after, entry = legs[0].After, legs[0].Entries[0]
		return t, nil
	}, func(ctx context.Context, k dynamo.Cancellation) error {
		switch {
		case k.Failed(schema.ReferenceItem):
			return wallets.ErrDuplicateReference
		case debtRaced(k):
			return dynamo.ErrRetry
		case k.Failed(schema.WalletItem):
			return s.whyRefused(ctx, c.CompanyID, c.WalletID)
		}
		return nil
	})
	if err != nil {
		return wallets.Wallet{}, wallets.Transaction{}, err
	}
	return after, entry, nil
}

// CreditByReference reads the claim of a credit reference of the company.
func (s *Wallets) CreditByReference(ctx context.Context, companyID, reference string) (wallets.CreditClaim, error) {
	return s.referenceClaim(ctx, companyID, schema.CreditRefSK(reference), "credit")
}

// whyRefused tells why a wallet adjustment's condition failed: the wallet
// is gone (wallets.ErrNotFound) or a balance would go below 0
// (wallets.ErrInsufficientBalance).
func (s *Wallets) whyRefused(ctx context.Context, companyID, walletID string) error {
	if _, err := s.GetWallet(ctx, companyID, walletID); err != nil {
		return err
	}
	return wallets.ErrInsufficientBalance
}

// whyRefusedActive tells why an adjustment made activeOnly failed: the
// wallet is gone (wallets.ErrNotFound), inactive (wallets.ErrInactive), or
// else short of money (short).
func (s *Wallets) whyRefusedActive(ctx context.Context, companyID, walletID string, short error) error {
	w, err := s.GetWallet(ctx, companyID, walletID)
	switch {
	case err != nil:
		return err
	case !w.IsActive:
		return wallets.ErrInactive
	}
	return short
}

// activeOnly adds to adjustment, an item of walletAdjustment, the condition
// that the wallet is active: money leaves a wallet for a new payout or card
// movement only while it is.
func activeOnly(adjustment types.TransactWriteItem) types.TransactWriteItem {
	u := adjustment.Update
	u.ConditionExpression = aws.String(aws.ToString(u.ConditionExpression) + " AND #active = :active")
	u.ExpressionAttributeNames["#active"] = "is_active"
	u.ExpressionAttributeValues[":active"] = &types.AttributeValueMemberBOOL{Value: true}
	return adjustment
}

// walletAdjustment returns the transaction item that adds adj to a wallet's
// balances (payout_available by adj.Available()), increments its version and
// sets updated_at to now. It is conditioned on the wallet existing, on no
// balance going negative (payout_available >= the amount it loses, and so
// on): a payout reserves with Adjustment{Reserved: total}, conditioned on
// payout_available >= total; a settlement releases the reservation,
// conditioned on payout_reserved covering it. No write waits for the
// wallet's version.
func (s *Wallets) walletAdjustment(companyID, walletID string, adj wallets.Adjustment, now time.Time) types.TransactWriteItem {
	names := map[string]string{
		"#pin": "payin_balance", "#pout": "payout_balance", "#res": "payout_reserved",
		"#avail": "payout_available", "#ver": "version", "#upd": "updated_at",
	}
	num := func(n int64) types.AttributeValue {
		return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
	}
	values := map[string]types.AttributeValue{
		":dpin": num(adj.Payin), ":dpout": num(adj.Payout), ":dres": num(adj.Reserved),
		":davail": num(adj.Available()), ":one": num(1),
		":now": &types.AttributeValueMemberS{Value: timestamp.Format(now)},
	}
	cond := []string{"attribute_exists(PK)"}
	for _, c := range []struct {
		name, value string
		delta       int64
	}{
		{"#pin", ":npin", adj.Payin}, {"#pout", ":npout", adj.Payout},
		{"#res", ":nres", adj.Reserved}, {"#avail", ":navail", adj.Available()},
	} {
		if c.delta < 0 {
			cond = append(cond, c.name+" >= "+c.value)
			values[c.value] = num(-c.delta)
		}
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.db.Table),
		Key:       dynamo.Key(schema.CompanyPK(companyID), schema.WalletSK(walletID)),
		UpdateExpression: aws.String("SET #pin = #pin + :dpin, #pout = #pout + :dpout, #res = #res + :dres, " +
			"#avail = #avail + :davail, #ver = #ver + :one, #upd = :now"),
		ConditionExpression:       aws.String(strings.Join(cond, " AND ")),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}}
}

// ledgerPut returns the transaction item that writes a new ledger entry.
func (s *Wallets) ledgerPut(t wallets.Transaction) (types.TransactWriteItem, error) {
	if t.ID == "" || t.CompanyID == "" || t.WalletID == "" {
		return types.TransactWriteItem{}, errors.New("store: ledger entry without id, company or wallet")
	}
	item, err := attributevalue.MarshalMap(newLedgerItem(t))
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("store: marshal ledger entry: %w", err)
	}
	return s.putNew(item), nil
}
