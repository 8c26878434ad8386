package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// ledgerItem is a wallet transaction as stored.
type ledgerItem struct {
	PK            string  `dynamodbav:"PK"`
	SK            string  `dynamodbav:"SK"`
	GSI1PK        string  `dynamodbav:"GSI1PK"`
	GSI1SK        string  `dynamodbav:"GSI1SK"`
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

// creditRefItem claims a sandbox credit reference for one ledger entry.
type creditRefItem struct {
	PK            string `dynamodbav:"PK"`
	SK            string `dynamodbav:"SK"`
	Type          string `dynamodbav:"type"`
	Reference     string `dynamodbav:"reference"`
	TransactionID string `dynamodbav:"transaction_id"`
	WalletID      string `dynamodbav:"wallet_id"`
}

func newLedgerItem(t wallets.Transaction) ledgerItem {
	it := ledgerItem{
		PK:            companyPK(t.CompanyID),
		SK:            ledgerSK(t.ID),
		GSI1PK:        walletLedgerPK(t.CompanyID, t.WalletID),
		GSI1SK:        ledgerSK(t.ID),
		Type:          kindLedger,
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
	found, err := s.db.getItem(ctx, companyPK(companyID), ledgerSK(id), &it)
	if err != nil {
		return wallets.Transaction{}, fmt.Errorf("store: get ledger entry %s: %w", id, err)
	}
	if !found {
		return wallets.Transaction{}, wallets.ErrTransactionNotFound
	}
	return it.transaction()
}

// ListTransactions returns the company's ledger entries that match q, newest
// first. The dates of q become a range of sort keys (entry ids are UUID v7
// of their created_at); a wallet id selects GSI1 (eventually consistent),
// otherwise the company partition is read strongly consistent. The other
// fields of q are applied to the items read.
func (s *Wallets) ListTransactions(ctx context.Context, companyID string, q wallets.TransactionQuery) ([]wallets.Transaction, error) {
	lo, hi := timeRange(ledgerSKPrefix, q.From, q.To)
	in := &dynamodb.QueryInput{
		TableName:        aws.String(s.db.Table),
		ScanIndexForward: aws.Bool(false),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":lo": &types.AttributeValueMemberS{Value: lo},
			":hi": &types.AttributeValueMemberS{Value: hi},
		},
	}
	if q.WalletID != "" {
		in.IndexName = aws.String(GSI1)
		in.KeyConditionExpression = aws.String("GSI1PK = :pk AND GSI1SK BETWEEN :lo AND :hi")
		in.ExpressionAttributeValues[":pk"] = &types.AttributeValueMemberS{Value: walletLedgerPK(companyID, q.WalletID)}
	} else {
		in.KeyConditionExpression = aws.String("PK = :pk AND SK BETWEEN :lo AND :hi")
		in.ExpressionAttributeValues[":pk"] = &types.AttributeValueMemberS{Value: companyPK(companyID)}
		in.ConsistentRead = aws.Bool(true)
	}
	items, err := s.query(ctx, in)
	if err != nil {
		return nil, fmt.Errorf("store: list ledger entries: %w", err)
	}
	out, err := decodeAll(items, ledgerItem.transaction)
	if err != nil {
		return nil, err
	}
	out = slices.DeleteFunc(out, func(t wallets.Transaction) bool { return !q.Match(t) })
	return out, nil
}

// ApplyChange writes c in one transaction: the wallet adjusted on the
// condition that it is at c.Wallet.Version and that no balance goes
// negative, the ledger entry, and the reference claim when c.Reference is
// set. A taken reference is wallets.ErrDuplicateReference; a wallet at
// another version, or a transaction conflict, is wallets.ErrStale; a wallet
// still at that version that would go negative is
// wallets.ErrInsufficientFunds.
func (s *Wallets) ApplyChange(ctx context.Context, c wallets.Change) error {
	w := c.Wallet
	items := []types.TransactWriteItem{
		s.walletAdjustment(w.CompanyID, w.ID, c.Adjust, w.Version, c.Now),
	}
	entry, err := s.ledgerPut(c.Entry)
	if err != nil {
		return err
	}
	items = append(items, entry)
	if c.Reference != "" {
		claim, err := attributevalue.MarshalMap(creditRefItem{
			PK: companyPK(w.CompanyID), SK: creditRefSK(c.Reference), Type: kindCreditRef,
			Reference: c.Reference, TransactionID: c.Entry.ID, WalletID: w.ID,
		})
		if err != nil {
			return fmt.Errorf("store: marshal credit reference: %w", err)
		}
		items = append(items, s.putNew(claim))
	}
	_, err = s.db.Client.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items})
	if err == nil {
		return nil
	}
	reasons := cancelReasons(err)
	switch {
	case len(reasons) == 3 && reasons[2] == "ConditionalCheckFailed":
		return wallets.ErrDuplicateReference
	case transactionConflict(err):
		return fmt.Errorf("store: change wallet %s: %w", w.ID, wallets.ErrStale)
	case len(reasons) >= 2 && reasons[1] == "ConditionalCheckFailed":
		// An entry id taken: another id on the retry.
		return fmt.Errorf("store: ledger entry %s exists: %w", c.Entry.ID, wallets.ErrStale)
	case len(reasons) >= 1 && reasons[0] == "ConditionalCheckFailed":
		return s.whyRefused(ctx, w)
	}
	return fmt.Errorf("store: change wallet %s: %w", w.ID, err)
}

// whyRefused tells why a wallet adjustment conditioned on w.Version failed:
// the wallet is gone, it moved on, or it would have gone negative.
func (s *Wallets) whyRefused(ctx context.Context, w wallets.Wallet) error {
	now, err := s.GetWallet(ctx, w.CompanyID, w.ID)
	switch {
	case err != nil:
		return err
	case now.Version != w.Version:
		return fmt.Errorf("store: wallet %s at version %d, not %d: %w", w.ID, now.Version, w.Version, wallets.ErrStale)
	}
	return wallets.ErrInsufficientFunds
}

// walletAdjustment returns the transaction item that adds adj to a wallet's
// balances (payout_available by adj.Available()), increments its version and
// sets updated_at to now. It is conditioned on the wallet existing, on no
// balance going negative (payout_available >= the amount it loses, and so
// on), and, when version is not 0, on the wallet being at that version.
// Payouts use it with version 0: a reservation is Adjustment{Reserved: total}
// conditioned only on payout_available >= total.
func (s *Wallets) walletAdjustment(companyID, walletID string, adj wallets.Adjustment, version int64, now time.Time) types.TransactWriteItem {
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
	if version != 0 {
		cond = append(cond, "#ver = :ver")
		values[":ver"] = num(version)
	}
	return types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.db.Table),
		Key:       primaryKeyOf(companyPK(companyID), walletSK(walletID)),
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
