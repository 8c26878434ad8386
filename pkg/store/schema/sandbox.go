package schema

// The simulated providers' items: each keeps its state on the same table,
// outside every company's partition, under keys that start with
// SandboxPrefix and its provider's name. Each partition holds one item.
// Their stores are pkg/providers/<kind>/<kind>db.

// SandboxPrefix starts the partition key of every simulated provider's
// item.
const SandboxPrefix = "SANDBOX#"

// The sandbox issuer (issuerdb).

// SandboxIssuerPrefix starts the partition key of every sandbox issuer
// item.
const SandboxIssuerPrefix = "SANDBOX#ISSUER#"

// SandboxCardholderPK is the partition of cardholder id.
func SandboxCardholderPK(id string) string { return "SANDBOX#ISSUER#CARDHOLDER#" + id }

// SandboxCardholderRefPK is the partition of the claim of a cardholder's
// reference (our customer id).
func SandboxCardholderRefPK(ref string) string { return "SANDBOX#ISSUER#CHREF#" + ref }

// SandboxCardPK is the partition of card id (the issuer's id).
func SandboxCardPK(id string) string { return "SANDBOX#ISSUER#CARD#" + id }

// SandboxCardRefPK is the partition of the claim of a card's reference
// (our card id).
func SandboxCardRefPK(ref string) string { return "SANDBOX#ISSUER#CARDREF#" + ref }

// SandboxMovePK is the partition of the claim of a movement's reference.
func SandboxMovePK(ref string) string { return "SANDBOX#ISSUER#MOVE#" + ref }

// SandboxDisputePK is the partition of dispute id.
func SandboxDisputePK(id string) string { return "SANDBOX#ISSUER#DISPUTE#" + id }

// SandboxDisputeRefPK is the partition of the claim of a dispute's
// reference.
func SandboxDisputeRefPK(ref string) string { return "SANDBOX#ISSUER#DISPUTEREF#" + ref }

// SandboxDisputeTxPK is the partition of the claim of the transaction a
// dispute is about.
func SandboxDisputeTxPK(transaction string) string {
	return "SANDBOX#ISSUER#DISPUTETX#" + transaction
}

// SandboxStatementPK is the partition of the network's statement entry id
// (an authorization or a transaction).
func SandboxStatementPK(id string) string { return "SANDBOX#ISSUER#STMT#" + id }

// SandboxStatementNotePK is the partition of the note of a notification
// that logged a statement entry.
func SandboxStatementNotePK(id string) string { return "SANDBOX#ISSUER#STMTNOTE#" + id }

// The GSI1 partitions of the sandbox issuer's lists, each of every
// company's cards: a sandbox network's entries are few.
const (
	SandboxAuthorizationsGSI1PK = "SANDBOX#ISSUER#STATEMENT#AUTHORIZATIONS"
	SandboxTransactionsGSI1PK   = "SANDBOX#ISSUER#STATEMENT#TRANSACTIONS"
	SandboxNoticesGSI1PK        = "SANDBOX#ISSUER#NOTICES"
)

// SandboxNoticePK is the partition of a notification as delivered (event
// id), with its attempts.
func SandboxNoticePK(id string) string { return "SANDBOX#ISSUER#NOTICE#" + id }

// SandboxDecisionPK is the partition of an authorization as the network
// decided it.
func SandboxDecisionPK(id string) string { return "SANDBOX#ISSUER#AUTH#" + id }

// Sort keys of the sandbox issuer's items.
const (
	SandboxCardholderSK             = "CARDHOLDER"
	SandboxCardSK                   = "CARD"
	SandboxRefSK                    = "REF"
	SandboxMoveSK                   = "MOVE"
	SandboxDisputeSK                = "DISPUTE"
	SandboxStatementAuthorizationSK = "AUTHORIZATION"
	SandboxStatementTransactionSK   = "TRANSACTION"
	SandboxStatementNoteSK          = "NOTE"
	SandboxNoticeSK                 = "NOTICE"
	SandboxDecisionSK               = "AUTHORIZATION"
)

// Item kinds of the sandbox issuer.
const (
	KindSandboxCardholder             = "sandbox_cardholder"
	KindSandboxCardholderRef          = "sandbox_cardholder_ref"
	KindSandboxCard                   = "sandbox_card"
	KindSandboxCardRef                = "sandbox_card_ref"
	KindSandboxCardMove               = "sandbox_card_move"
	KindSandboxDispute                = "sandbox_dispute"
	KindSandboxDisputeRef             = "sandbox_dispute_ref"
	KindSandboxDisputeTx              = "sandbox_dispute_tx"
	KindSandboxStatementAuthorization = "sandbox_statement_authorization"
	KindSandboxStatementTransaction   = "sandbox_statement_transaction"
	KindSandboxStatementNote          = "sandbox_statement_note"
	KindSandboxNotice                 = "sandbox_notice"
	KindSandboxDecision               = "sandbox_authorization"
)

// The sandbox operator (operatordb).

// SandboxOrderPK is the partition of the sandbox operator's order of
// reference ref.
func SandboxOrderPK(ref string) string { return "SANDBOX#OPERATOR#" + ref }

// SandboxOrderSK is the sort key of a sandbox order.
const SandboxOrderSK = "ORDER"

// KindSandboxOrder is the type of a sandbox order.
const KindSandboxOrder = "sandbox_order"

// The sandbox KYC provider (kycdb).

// SandboxKYCPK is the partition of the sandbox KYC provider's verification
// of reference ref.
func SandboxKYCPK(ref string) string { return "SANDBOX#KYC#" + ref }

// SandboxKYCSK is the sort key of a sandbox verification.
const SandboxKYCSK = "VERIFICATION"

// KindSandboxKYC is the type of a sandbox verification.
const KindSandboxKYC = "sandbox_kyc"
