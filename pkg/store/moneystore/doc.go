// Package moneystore is the DynamoDB implementation of the stores of money,
// on the table of package store (store.DB) with its toolkit: the wallets
// and their ledger, and everything that moves money or holds it.
//
// The files:
//
//   - posting.go: Wallets.post, the one write of money (a wallets.Posting,
//     the company's pending debts paid out of a credit);
//   - wallets.go, ledger.go, funds.go, moves.go: the wallets, their ledger
//     entries, fundings and transfers;
//   - conversions.go, rates.go: currency conversions and the rates they use;
//   - debts.go: the company's debts and their recovery;
//   - payments*.go, bulk*.go: payments and bulk batches of payouts;
//   - cards*.go: cards, their balances, network transactions, disputes and
//     secrets (a card's money is posted with the wallet's);
//   - reconciliations.go: the reconciliation's reports, outside every
//     company's partition.
//
// A write is a store.Txn committed by store.DB.Commit: its events numbered
// (Txn.AddEvent) and the effect of the request's Idempotency-Key recorded
// (store.DB.RecordEffect) in the same transaction.
package moneystore
