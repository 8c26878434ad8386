package schema

import "fmt"

// Companies and credentials.

// CompanyPK is the partition of every item company companyID owns.
func CompanyPK(companyID string) string { return "COMPANY#" + companyID }

// CompanySK is the sort key of a company's own record in its partition.
const CompanySK = "COMPANY"

// Item kinds of companies and their credentials.
const (
	KindCompany = "company"
	KindClient  = "client"
)

// ClientPK is the partition of the lookup item that maps a client_id to its
// company; it lives outside the company partition because the token
// endpoint knows only the client_id.
func ClientPK(clientID string) string { return "CLIENT#" + clientID }

// ClientSK is the sort key of the client_id lookup item.
const ClientSK = "CLIENT"

// RateLimitPK is the partition of one rate-limit window: scope names the
// limited endpoint ("token"), key the caller (a source IP).
func RateLimitPK(scope, key string) string { return "RATE#" + scope + "#" + key }

// RateLimitSK is the sort key of a rate-limit window item.
const RateLimitSK = "RATE"

// KindRateLimit is the type of a rate-limit window item.
const KindRateLimit = "rate_limit"

// TokenBucketSK is the sort key, in the company's partition, of its token
// bucket for one route class (limits.Class: read, money, reveal).
func TokenBucketSK(class string) string { return "LIMIT#" + class }

// KindTokenBucket is the type of a company's token bucket item.
const KindTokenBucket = "token_bucket"

// Wallets and their ledger.

// Item kinds of wallets and their ledger.
const (
	KindWallet     = "wallet"
	KindWalletPair = "wallet_pair"
	KindWalletRef  = "wallet_ref"
	KindLedger     = "wallet_tx"
	KindCreditRef  = "credit_ref"
)

// WalletSKPrefix starts the sort key of every wallet of a company. It does
// not start the pair claims (WalletPairSK).
const WalletSKPrefix = "WALLET#"

// WalletSK is the sort key of a wallet in its company's partition.
func WalletSK(walletID string) string { return WalletSKPrefix + walletID }

// WalletPairSK is the sort key of the claim item that makes a (currency,
// country) pair unique within a company.
func WalletPairSK(currency, countryISO string) string {
	return "WALLETPAIR#" + currency + "#" + countryISO
}

// WalletRefPK is the partition of the lookup item that maps a wallet id to
// its company; only the operator console reads it, because it alone knows a
// wallet id without a company.
func WalletRefPK(walletID string) string { return "WALLETREF#" + walletID }

// WalletRefSK is the sort key of the wallet id lookup item.
const WalletRefSK = "WALLETREF"

// LedgerSKPrefix starts the sort key of every ledger entry of a company.
const LedgerSKPrefix = "WTX#"

// LedgerSK is the sort key of a wallet transaction (ledger entry) in its
// company's partition; ids are UUID v7, so the keys are time-ordered.
func LedgerSK(txID string) string { return LedgerSKPrefix + txID }

// WalletLedgerPK is the GSI1 partition of one wallet's ledger entries
// (GSI1SK is LedgerSK).
func WalletLedgerPK(companyID, walletID string) string {
	return CompanyPK(companyID) + "#WALLET#" + walletID
}

// CreditRefSK is the sort key of the claim item that lets a sandbox credit
// reference be used once per company.
func CreditRefSK(reference string) string { return "CREDITREF#" + reference }

// Fundings.

// Item kinds of fundings.
const (
	KindFundRef    = "fund_ref"
	KindFundingRef = "funding_ref"
)

// OpenFundingIndex names the GSI2 index of the fundings declared and not
// yet decided, sharded (ShardKey): the sweeper asks the bank about them.
const OpenFundingIndex = "OPEN_FUNDING"

// OpenFundingGSI2PK is the shard of the open-funding index of funding id.
func OpenFundingGSI2PK(id string) string { return ShardKey(OpenFundingIndex, id) }

// OpenFundingGSI2SK orders the fundings of a shard by when they were
// declared, and names them.
func OpenFundingGSI2SK(created, companyID, id string) string {
	return created + "#" + companyID + "#" + id
}

// FundRefSK is the sort key of the claim of a funding reference.
func FundRefSK(reference string) string { return "FUNDREF#" + reference }

// FundingRefPK is the partition of the lookup of a funding's company.
func FundingRefPK(id string) string { return "FUNDINGREF#" + id }

// FundingRefSK is the sort key of the lookup of a funding's company.
const FundingRefSK = "FUNDINGREF"

// Debts.

// Item kinds of debts.
const (
	KindDebt        = "debt"
	KindPendingDebt = "debt_pending"
)

// DebtSKPrefix starts the sort key of every debt of a company.
const DebtSKPrefix = "DEBT#"

// DebtSK is the sort key of a debt in its company's partition; ids are
// UUID v7, so the keys are time-ordered.
func DebtSK(id string) string { return DebtSKPrefix + id }

// PendingDebtSKPrefix starts the sort key of every pending debt's marker.
const PendingDebtSKPrefix = "PENDINGDEBT#"

// PendingDebtSK is the sort key of the marker a debt has while it is
// pending.
func PendingDebtSK(id string) string { return PendingDebtSKPrefix + id }

// Idempotency keys.

// IdempotencySK is the sort key of the record of an Idempotency-Key in its
// company's partition.
func IdempotencySK(key string) string { return "IDEMPOTENCY#" + key }

// KindIdempotencyKey is the type of the record of an Idempotency-Key.
const KindIdempotencyKey = "idempotency_key"

// Payments.

// Item kinds of payments.
const (
	KindPayment    = "payment"
	KindExternalID = "external_id"
	KindPaymentRef = "payment_ref"
)

// PaymentSKPrefix starts the sort key of every payment of a company.
const PaymentSKPrefix = "PAY#"

// ReconcileGSI1PK is the GSI1 partition of the payments of every company
// flagged for the operator console's reconciliation.
const ReconcileGSI1PK = "RECONCILE"

// PaymentSK is the sort key of a payment in its company's partition.
func PaymentSK(id string) string { return PaymentSKPrefix + id }

// ExternalIDSK is the sort key of the claim of an external_id.
func ExternalIDSK(externalID string) string { return "EXTID#" + externalID }

// PaymentRefPK is the partition of the lookup item that maps a payment id
// to its company (the operator console knows only the id).
func PaymentRefPK(id string) string { return "PAYREF#" + id }

// PaymentRefSK is the sort key of the payment id lookup item.
const PaymentRefSK = "PAYREF"

// OpenPaymentIndex names the GSI2 index of the payments the worker polls
// the operator about, sharded (ShardKey).
const OpenPaymentIndex = "OPEN_PAYMENT"

// OpenPaymentGSI2PK is the shard of the open-payment index of payment id.
func OpenPaymentGSI2PK(id string) string { return ShardKey(OpenPaymentIndex, id) }

// OpenPaymentGSI2SK orders the payments of an OPEN_PAYMENT shard by when
// the worker expects them, and names them.
func OpenPaymentGSI2SK(due, companyID, id string) string { return TimedRef(due, companyID, id) }

// Bulk payout batches.

// Item kinds of batches.
const (
	KindBulkBatch = "bulk_batch"
	KindBulkChunk = "bulk_chunk"
)

// BulkSKPrefix starts the sort key of every batch of a company; a chunk's
// key (BulkChunkSK) does not start with it.
const BulkSKPrefix = "BULK#"

// OpenBulkGSI2PK is the GSI2 partition of the batches not yet completed,
// of every company, by creation (GSI2SK a TimedRef).
const OpenBulkGSI2PK = "OPEN_BULK"

// BulkChunkPrefix starts the sort key of every chunk of every batch.
const BulkChunkPrefix = "BULKROWS#"

// BulkSK is the sort key of a batch in its company's partition; ids are
// UUID v7, so the keys are time-ordered.
func BulkSK(id string) string { return BulkSKPrefix + id }

// BulkChunkSK is the sort key of chunk n of batch id.
func BulkChunkSK(id string, n int) string { return fmt.Sprintf("%s%04d", BulkChunksOf(id), n) }

// BulkChunksOf starts the sort key of every chunk of batch id.
func BulkChunksOf(id string) string { return BulkChunkPrefix + id + "#" }
