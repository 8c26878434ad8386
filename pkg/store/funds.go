package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"

	"payments/pkg/events"
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

// Item kinds of fundings.
const (
	kindFundRef    = "fund_ref"
	kindFundingRef = "funding_ref"
)

// fundRefSK is the sort key of the claim of a funding reference.
func fundRefSK(reference string) string { return "FUNDREF#" + reference }

// fundingRefPK is the partition of the lookup of a funding's company.
func fundingRefPK(id string) string { return "FUNDINGREF#" + id }

// fundingRefSK is the sort key of the lookup of a funding's company.
func fundingRefSK() string { return "FUNDINGREF" }

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
		PK: companyPK(f.CompanyID), SK: fundRefSK(f.Reference), Type: kindFundRef,
		Reference: f.Reference, TransactionID: f.ID, WalletID: f.WalletID,
		Balance: string(f.Balance), Amount: f.Amount,
	})
	if err != nil {
		return fmt.Errorf("store: marshal funding reference: %w", err)
	}
	lookup, err := attributevalue.MarshalMap(fundingRefItem{
		PK: fundingRefPK(f.ID), SK: fundingRefSK(), Type: kindFundingRef, TransactionID: f.ID, CompanyID: f.CompanyID,
	})
	if err != nil {
		return fmt.Errorf("store: marshal funding lookup: %w", err)
	}
	t := &txn{}
	s.db.recordEffect(ctx, t, f.ID, nil)
	t.add("reference", s.putNew(claim))
	t.add("lookup", s.putNew(lookup))
	if _, err := s.post(ctx, t, p); err != nil { // reads nothing: the entry is open
		return err
	}
	return s.db.writeOnce(ctx, "declare funding "+f.ID, t, func(_ context.Context, k cancellation) error {
		if k.failed("reference") {
			return wallets.ErrDuplicateReference
		}
		return nil
	})
}

// FundingByReference reads the claim of a funding reference of the
// company.
func (s *Wallets) FundingByReference(ctx context.Context, companyID, reference string) (wallets.CreditClaim, error) {
	return s.referenceClaim(ctx, companyID, fundRefSK(reference), "funding")
}

// referenceClaim reads the claim of a credit's or a funding's reference,
// item sk of the company; wallets.ErrTransactionNotFound when there is
// none.
func (s *Wallets) referenceClaim(ctx context.Context, companyID, sk, what string) (wallets.CreditClaim, error) {
	var it creditRefItem
	found, err := s.db.getItem(ctx, companyPK(companyID), sk, &it)
	if err != nil {
		return wallets.CreditClaim{}, fmt.Errorf("store: get %s reference: %w", what, err)
	}
	if !found {
		return wallets.CreditClaim{}, wallets.ErrTransactionNotFound
	}
	return wallets.CreditClaim{
		Reference: it.Reference, WalletID: it.WalletID, Balance: wallets.SubBalance(it.Balance),
		Amount: it.Amount, TransactionID: it.TransactionID,
	}, nil
}

// FundingCompany returns the company of funding id, from its lookup.
func (s *Wallets) FundingCompany(ctx context.Context, id string) (string, error) {
	var it fundingRefItem
	found, err := s.db.getItem(ctx, fundingRefPK(id), fundingRefSK(), &it)
	if err != nil {
		return "", fmt.Errorf("store: get funding lookup %s: %w", id, err)
	}
	if !found {
		return "", wallets.ErrTransactionNotFound
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
	err = s.db.write(ctx, "settle funding "+f.ID, func(ctx context.Context) (*txn, error) {
		put, err := eventPut(s.db.Table, ev)
		if err != nil {
			return nil, err
		}
		t := &txn{}
		t.add("event", put)
		legs, err := s.post(ctx, t, p)
		if err != nil {
			return nil, err
		}
		written = f
		written.BalanceBefore, written.BalanceAfter = legs[0].Balances[0][0], legs[0].Balances[0][1]
		return t, nil
	}, func(ctx context.Context, k cancellation) error {
		switch {
		case k.failed("updated0"):
			return wallets.ErrFundingFinal
		case debtRaced(k):
			return errRetry
		case k.failed("wallet"):
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
	return dueItems(ctx, s.db, shardKeys(openFundingIndex)[:IndexShards], cutoff, limit, ledgerItem.transaction)
}
