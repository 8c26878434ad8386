package moneystore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"payments/pkg/events"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/wallets"
)

// Fundings: the bank transfers companies declare (wallets.FundStore). A
// funding is a FUND ledger entry (WTX#<uuid v7>), PENDING with delta 0 until
// it is settled, and while PENDING in the sharded open-funding index
// (GSI2PK OPEN_FUNDING#<nn>, GSI2SK "<created_at>#<company id>#<id>"), how
// the sweeper finds the fundings whose bank answer was lost; beside it:
//
//   - FUNDREF#<reference>, in the company partition: the claim of the
//     company's reference, as a sandbox credit's CREDITREF# (creditRefItem);
//   - FUNDINGREF#<id>, outside it: the lookup of the funding's company for
//     the operator console, which knows the id alone (as PAYREF# for
//     payments).

// fundingRefItem maps a funding id to its company.
type fundingRefItem struct {
	PK            string `dynamodbav:"PK"`
	SK            string `dynamodbav:"SK"`
	Type          string `dynamodbav:"type"`
	TransactionID string `dynamodbav:"transaction_id"`
	CompanyID     string `dynamodbav:"company_id"`
}

// CreateFunding writes the PENDING funding f (a posting that moves no
// balance yet), the claim of its reference and the lookup of its id in one
// transaction, each on the condition that it is new: a claimed reference
// is wallets.ErrDuplicateReference.
func (s *Wallets) CreateFunding(ctx context.Context, f wallets.Transaction) error {
	if f.Status != wallets.StatusPending || f.Type != wallets.TypeFund || f.Delta != 0 || f.Reference == "" {
		return fmt.Errorf("store: funding %s is not a new PENDING FUND entry with a reference", f.ID)
	}
	p, err := wallets.NewPosting(f.CompanyID, f.CreatedAt, wallets.Leg{WalletID: f.WalletID, Entries: []wallets.Transaction{f}})
	if err != nil {
		return fmt.Errorf("store: funding %s: %w", f.ID, err)
	}
	claim, err := attributevalue.MarshalMap(creditRefItem{
		PK: schema.CompanyPK(f.CompanyID), SK: schema.FundRefSK(f.Reference), Type: schema.KindFundRef,
		Reference: f.Reference, TransactionID: f.ID, WalletID: f.WalletID,
		Balance: string(f.Balance), Amount: f.Amount,
	})
	if err != nil {
		return fmt.Errorf("store: marshal funding reference: %w", err)
	}
	lookup, err := attributevalue.MarshalMap(fundingRefItem{
		PK: schema.FundingRefPK(f.ID), SK: schema.FundingRefSK, Type: schema.KindFundingRef, TransactionID: f.ID, CompanyID: f.CompanyID,
	})
	if err != nil {
		return fmt.Errorf("store: marshal funding lookup: %w", err)
	}
	t := &store.Txn{}
	s.db.RecordEffect(ctx, t, f.ID, nil)
	t.Add(schema.ReferenceItem, s.putNew(claim))
	t.Add("lookup", s.putNew(lookup))
	if _, err := s.post(ctx, t, p); err != nil { // reads nothing: the entry is open
		return err
	}
	return s.db.CommitOnce(ctx, "declare funding "+f.ID, t, func(_ context.Context, k dynamo.Cancellation) error {
		if k.Failed(schema.ReferenceItem) {
			return wallets.ErrDuplicateReference
		}
		return nil
	})
}

// FundingByReference reads the claim of a funding reference of the
// company.
func (s *Wallets) FundingByReference(ctx context.Context, companyID, reference string) (wallets.CreditClaim, error) {
	return s.referenceClaim(ctx, companyID, schema.FundRefSK(reference), "funding")
}

// referenceClaim reads the claim of a credit's or a funding's reference,
// item sk of the company; wallets.ErrTransactionNotFound when there is
// none.
func (s *Wallets) referenceClaim(ctx context.Context, companyID, sk, what string) (wallets.CreditClaim, error) {
	var it creditRefItem
	if err := s.db.Get(ctx, what+" reference", schema.CompanyPK(companyID), sk, &it, wallets.ErrTransactionNotFound); err != nil {
		return wallets.CreditClaim{}, err
	}
	return wallets.CreditClaim{
		Reference: it.Reference, WalletID: it.WalletID, Balance: wallets.SubBalance(it.Balance),
		Amount: it.Amount, TransactionID: it.TransactionID,
	}, nil
}

// FundingCompany returns the company of funding id, from its lookup.
func (s *Wallets) FundingCompany(ctx context.Context, id string) (string, error) {
	var it fundingRefItem
	if err := s.db.Get(ctx, "funding lookup "+id, schema.FundingRefPK(id), schema.FundingRefSK, &it, wallets.ErrTransactionNotFound); err != nil {
		return "", err
	}
	return it.CompanyID, nil
}

// SettleFunding writes f, a funding made SUCCESS or FAILED, with ev in one
// transaction, on the condition that the entry is still PENDING
// (wallets.ErrFundingFinal otherwise: a second decision, or a concurrent
// one that won): its posting (post), which settles the entry and, for a
// SUCCESS, adds f.Delta to f.Balance of the wallet, active or not (the
// money has arrived), with the balances before and after on the entry; a
// credit to the payout balance of a USD wallet first pays the company's
// pending debts. It returns the entry as written.
func (s *Wallets) SettleFunding(ctx context.Context, f wallets.Transaction, ev events.Event) (wallets.Transaction, error) {
	if !f.Status.Terminal() || f.CompletedAt == nil || (f.Status == wallets.StatusFailed && f.Delta != 0) {
		return wallets.Transaction{}, fmt.Errorf("store: funding %s: not a settlement (%s, delta %d)", f.ID, f.Status, f.Delta)
	}
	adj := wallets.Adjustment{Payin: f.Delta}
	if f.Balance == wallets.Payout {
		adj = wallets.Adjustment{Payout: f.Delta}
	}
	p, err := wallets.NewPosting(f.CompanyID, *f.CompletedAt, wallets.Leg{
		WalletID: f.WalletID, Adjust: adj,
		Updates: []wallets.EntryUpdate{{
			ID: f.ID, Balance: f.Balance, From: wallets.StatusPending, To: f.Status,
			Delta: f.Delta, CompletedAt: f.CompletedAt,
		}},
	})
	if err != nil {
		return wallets.Transaction{}, fmt.Errorf("store: funding %s: %w", f.ID, err)
	}
	var written wallets.Transaction
	err = s.db.Commit(ctx, "settle funding "+f.ID, func(ctx context.Context) (*store.Txn, error) {
		t := &store.Txn{}
		t.AddEvent(schema.EventItem, ev)
		legs, err := s.post(ctx, t, p)
		if err != nil {
			return nil, err
		}
		written = f
		written.BalanceBefore, written.BalanceAfter = legs[0].Balances[0][0], legs[0].Balances[0][1]
		return t, nil
	}, func(ctx context.Context, k dynamo.Cancellation) error {
		switch {
		case k.Failed(schema.Nth(schema.UpdatedItems, 0)):
			return wallets.ErrFundingFinal
		case debtRaced(k):
			return dynamo.ErrRetry
		case k.Failed(schema.WalletItem):
			return s.whyRefused(ctx, f.CompanyID, f.WalletID)
		}
		return nil
	})
	if err != nil {
		return wallets.Transaction{}, err
	}
	return written, nil
}

// OpenFundings returns up to limit PENDING fundings of every company
// declared before cutoff, from every shard of the open-funding index,
// oldest first within a shard (eventually consistent: the caller reads
// each again). Fundings declared before the index existed are not in it.
func (s *Wallets) OpenFundings(ctx context.Context, cutoff time.Time, limit int) ([]wallets.Transaction, error) {
	return store.DueItems(ctx, s.db, schema.ShardKeys(schema.OpenFundingIndex)[:schema.IndexShards], cutoff, limit, ledgerItem.transaction)
}
