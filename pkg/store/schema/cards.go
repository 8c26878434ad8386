package schema

import (
	"crypto/sha256"
	"encoding/hex"
)

// Cards.

// Item kinds of cards.
const (
	KindCard        = "card"
	KindCardSlots   = "card_slots"
	KindCardTx      = "card_tx"
	KindCardReveal  = "card_reveal"
	KindCardSecrets = "card_secrets"
	KindCardRef     = "card_ref"
	KindIssuerEvent = "issuer_event"
	KindIssuerTx    = "issuer_tx"
)

// CardSKPrefix starts the sort key of every card of a company.
const CardSKPrefix = "CARD#"

// CardTxSKPrefix starts the sort key of every card transaction of a
// company.
const CardTxSKPrefix = "CTX#"

// CardSlotsSK is the sort key of the count of a company's cards; it does
// not start with CardSKPrefix.
const CardSlotsSK = "CARDSLOTS"

// Sharded GSI2 indexes of cards (ShardKey).
const (
	// OpenCardTxIndex holds the card transactions not yet settled.
	OpenCardTxIndex = "OPEN_CARDTX"
	// OpenHoldIndex holds the authorizations whose hold is open.
	OpenHoldIndex = "OPEN_HOLD"
	// OpenTerminationIndex holds the terminated cards whose open holds
	// are not all released yet.
	OpenTerminationIndex = "OPEN_TERMINATION"
)

// CardSK is the sort key of a card in its company's partition. The slot
// count's key, CardSlotsSK, does not start with CardSKPrefix.
func CardSK(id string) string { return CardSKPrefix + id }

// CardSecretsSKPrefix starts the sort key of every card's secrets item.
const CardSecretsSKPrefix = "CARDSECRETS#"

// CardSecretsSK is the sort key, in its company's partition, of the item
// that holds card id's sealed number and CVV. It carries no index key: no
// index ever copies them. It does not start with CardSKPrefix.
func CardSecretsSK(id string) string { return CardSecretsSKPrefix + id }

// CardTxSK is the sort key of a card transaction in its company's
// partition; ids are UUID v7, so the keys are time-ordered.
func CardTxSK(id string) string { return CardTxSKPrefix + id }

// CustomerCardsPK is the GSI1 partition of one customer's cards (GSI1SK is
// CardSK).
func CustomerCardsPK(companyID, customerID string) string {
	return CompanyPK(companyID) + "#CUSTOMER#" + customerID
}

// CardTxsPK is the GSI1 partition of one card's transactions (GSI1SK is
// CardTxSK).
func CardTxsPK(companyID, cardID string) string {
	return CompanyPK(companyID) + "#CARD#" + cardID
}

// CustomerTxsPK is the GSI3 partition of one customer's card transactions
// (GSI3SK is CardTxSK).
func CustomerTxsPK(companyID, customerID string) string {
	return CustomerCardsPK(companyID, customerID) + "#CTX"
}

// RevealSKPrefix starts the sort key of every reveal record of a card.
func RevealSKPrefix(cardID string) string { return "REVEAL#" + cardID + "#" }

// RevealSK is the sort key of a reveal record; ids are UUID v7.
func RevealSK(cardID, id string) string { return RevealSKPrefix(cardID) + id }

// CardRefPKPrefix starts the partition of every card id lookup item.
const CardRefPKPrefix = "CARDREF#"

// CardRefPK is the partition of the lookup item that maps a card id to its
// company: the issuer's notifications name our card, not its company.
func CardRefPK(cardID string) string { return CardRefPKPrefix + cardID }

// CardRefSK is the sort key of the card id lookup item.
const CardRefSK = "CARDREF"

// IssuerEventSK is the sort key of the claim of an issuer notification
// applied to one of the company's cards.
func IssuerEventSK(id string) string { return "ISSUEREVENT#" + id }

// IssuerTxSK is the sort key of the lookup of a network transaction.
func IssuerTxSK(id string) string { return "ISSUERTX#" + id }

// OpenCardTxGSI2PK is the shard of the open card transaction index of
// transaction id.
func OpenCardTxGSI2PK(id string) string { return ShardKey(OpenCardTxIndex, id) }

// OpenCardTxGSI2SK orders the open transactions of a shard by creation
// time, and names them.
func OpenCardTxGSI2SK(created, companyID, id string) string {
	return created + "#" + companyID + "#" + id
}

// OpenHoldGSI2PK is the shard of the open hold index of authorization id:
// an authorization is in it while its hold is open, so that the sweeper
// finds the holds old enough to expire.
func OpenHoldGSI2PK(id string) string { return ShardKey(OpenHoldIndex, id) }

// OpenHoldGSI2SK orders the open holds of a shard by creation time, and
// names them (as OpenCardTxGSI2SK).
func OpenHoldGSI2SK(created, companyID, id string) string {
	return OpenCardTxGSI2SK(created, companyID, id)
}

// OpenTerminationGSI2PK is the shard of the open termination index of
// card id: a terminated card is in it while it keeps money for open holds,
// so that the sweeper finds the cards whose holds are still to release.
func OpenTerminationGSI2PK(id string) string { return ShardKey(OpenTerminationIndex, id) }

// OpenTerminationGSI2SK orders the terminated cards of a shard by the time
// of their termination, and names them (as OpenCardTxGSI2SK).
func OpenTerminationGSI2SK(terminated, companyID, id string) string {
	return OpenCardTxGSI2SK(terminated, companyID, id)
}

// CardIndex names the GSI3 index of every company's cards, sharded
// (ShardKey; GSI3SK the card id): the reconciliation sums their balances.
const CardIndex = "CARDS"

// CardGSI3PK is the shard of the card index of card id.
func CardGSI3PK(id string) string { return ShardKey(CardIndex, id) }

// Card disputes.

// Item kinds of disputes.
const (
	KindCardDispute    = "card_dispute"
	KindCardDisputeTx  = "card_dispute_tx"
	KindCardDisputeRef = "card_dispute_ref"
)

// DisputeSKPrefix starts the sort key of every dispute of a company.
const DisputeSKPrefix = "DISPUTE#"

// DisputeSK is the sort key of a dispute in its company's partition; ids
// are UUID v7, so the keys are time-ordered. The claims below do not start
// with DisputeSKPrefix.
func DisputeSK(id string) string { return DisputeSKPrefix + id }

// DisputeTxSK is the sort key of the claim of a settlement by its dispute.
func DisputeTxSK(txID string) string { return "DISPUTETX#" + txID }

// IssuerDisputeSK is the sort key of the lookup of a dispute by the
// issuer's id.
func IssuerDisputeSK(issuerID string) string { return "ISSUERDISPUTE#" + issuerID }

// Customers.

// Item kinds of customers.
const (
	KindCustomer      = "customer"
	KindCustomerClaim = "customer_claim"
	KindCustomerRef   = "customer_ref"
)

// CustomerSKPrefix starts the sort key of every customer of a company.
const CustomerSKPrefix = "CUSTOMER#"

// KYCReviewGSI1PK is the GSI1 partition of the customers of every company
// waiting for the operator console's review (PENDING_REVIEW); GSI1SK is
// the customer id, a UUID v7: oldest first. A customer leaves it when
// decided.
const KYCReviewGSI1PK = "KYC_REVIEW"

// CustomerSK is the sort key of a customer in its company's partition.
func CustomerSK(id string) string { return CustomerSKPrefix + id }

// CustomerRefPK is the partition of the lookup item that maps a customer id
// to its company (the operator console knows only the id).
func CustomerRefPK(id string) string { return "CUSTREF#" + id }

// CustomerRefSK is the sort key of the customer id lookup item.
const CustomerRefSK = "CUSTREF"

// The compared values a customer claims (CustomerClaimSK).
const (
	ClaimEmail    = "EMAIL"
	ClaimIDNumber = "IDNUMBER"
)

// CustomerClaimSK is the sort key of the claim of a compared value of
// kind (ClaimEmail, ClaimIDNumber): its SHA-256, never the value.
func CustomerClaimSK(kind, value string) string {
	sum := sha256.Sum256([]byte(value))
	return "CUSTCLAIM#" + kind + "#" + hex.EncodeToString(sum[:])
}
