package store

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The schema: the table, its attributes and indexes, and every key, index
// name and item kind of our items. No other file spells a key.

// Attribute names shared by every item.
const (
	attrPK     = "PK"
	attrSK     = "SK"
	attrGSI1PK = "GSI1PK"
	attrGSI1SK = "GSI1SK"
	attrGSI2PK = "GSI2PK"
	attrGSI2SK = "GSI2SK"
	attrGSI3PK = "GSI3PK"
	attrGSI3SK = "GSI3SK"
	// AttrExpiresAt is the TTL attribute: epoch seconds after which DynamoDB
	// may delete the item.
	AttrExpiresAt = "expires_at"
)

// Index names.
const (
	GSI1 = "GSI1"
	GSI2 = "GSI2"
	GSI3 = "GSI3"
)

// TableDefinition is the one definition of the table: the local stack and
// the tests create it from here, and a test proves template.yaml declares the
// same keys and indexes.
func TableDefinition(name string) *dynamodb.CreateTableInput {
	str := func(n string) types.AttributeDefinition {
		return types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS}
	}
	key := func(pk, sk string) []types.KeySchemaElement {
		return []types.KeySchemaElement{
			{AttributeName: aws.String(pk), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(sk), KeyType: types.KeyTypeRange},
		}
	}
	gsi := func(name, pk, sk string) types.GlobalSecondaryIndex {
		return types.GlobalSecondaryIndex{
			IndexName:  aws.String(name),
			KeySchema:  key(pk, sk),
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll},
		}
	}
	return &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			str(attrPK), str(attrSK), str(attrGSI1PK), str(attrGSI1SK), str(attrGSI2PK), str(attrGSI2SK),
			str(attrGSI3PK), str(attrGSI3SK),
		},
		KeySchema: key(attrPK, attrSK),
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{
			gsi(GSI1, attrGSI1PK, attrGSI1SK),
			gsi(GSI2, attrGSI2PK, attrGSI2SK),
			gsi(GSI3, attrGSI3PK, attrGSI3SK),
		},
	}
}

// attrType is the attribute that names an item's type ("ledger",
// "payment", "event", …).
const attrType = "type"

// Sharded indexes. The sweeper's indexes (open payments, open fundings,
// open card transactions, unpublished events, events the webhook worker
// has not taken, pending webhook deliveries) are GSI2 partitions spread
// over IndexShards shards.

// IndexShards is how many GSI2 partitions each sweeper index is spread
// over (OPEN_PAYMENT#00 … OPEN_PAYMENT#15, OUTBOX#00 … OUTBOX#15): an item
// goes to the shard of a hash of its id, so that no single partition takes
// every write of the index; the sweeper reads every shard.
const IndexShards = 16

// shardKey returns the GSI2 partition of id in the index named prefix.
func shardKey(prefix, id string) string {
	h := fnv.New32a()
	h.Write([]byte(id))
	return fmt.Sprintf("%s#%02d", prefix, h.Sum32()%IndexShards)
}

// shardKeys returns every partition of the index named prefix, starting at
// a random one so that a sweep cut short by its limit does not always
// favour the same shards, and last the partition named prefix alone, where
// items written before the index was sharded still are (the sweeper moves
// them: see payments.Service.Sweep).
func shardKeys(prefix string) []string {
	keys := make([]string, IndexShards, IndexShards+1)
	first := rand.IntN(IndexShards)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s#%02d", prefix, (first+i)%IndexShards)
	}
	return append(keys, prefix)
}

// shardKeysInOrder returns every shard of the index named prefix, first to
// last: a list read a page after another walks them in this order (the
// created-payment index).
func shardKeysInOrder(prefix string) []string {
	keys := make([]string, IndexShards)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s#%02d", prefix, i)
	}
	return keys
}

// Key builders. A company-owned item's partition key is always
// companyPK(companyID); only lookup items that map a public identifier to its
// company (client ids, wallet ids for the operator console) live outside it.

func companyPK(companyID string) string { return "COMPANY#" + companyID }

// Companies and credentials.

// companySK is the sort key of a company's own record in its partition.
func companySK() string { return "COMPANY" }

// clientPK is the partition of the lookup item that maps a client_id to its
// company; it lives outside the company partition because the token
// endpoint knows only the client_id.
func clientPK(clientID string) string { return "CLIENT#" + clientID }

// clientSK is the sort key of the client_id lookup item.
func clientSK() string { return "CLIENT" }

// rateLimitPK is the partition of one rate-limit window: scope names the
// limited endpoint ("token"), key the caller (a source IP).
func rateLimitPK(scope, key string) string { return "RATE#" + scope + "#" + key }

// rateLimitSK is the sort key of a rate-limit window item.
func rateLimitSK() string { return "RATE" }

// tokenBucketSK is the sort key, in the company's partition, of its token
// bucket for one route class (limits.Class: read, money, reveal).
func tokenBucketSK(class string) string { return "LIMIT#" + class }

// kindTokenBucket is the type of a company's token bucket item.
const kindTokenBucket = "token_bucket"

// Wallets and their ledger.

// Item kinds of the "type" attribute.
const (
	kindWallet     = "wallet"
	kindWalletPair = "wallet_pair"
	kindWalletRef  = "wallet_ref"
	kindLedger     = "wallet_tx"
	kindCreditRef  = "credit_ref"
)

// walletSK is the sort key of a wallet in its company's partition.
func walletSK(walletID string) string { return walletSKPrefix + walletID }

// walletSKPrefix starts the sort key of every wallet of a company. It does
// not start the pair claims (WALLETPAIR#…).
const walletSKPrefix = "WALLET#"

// walletPairSK is the sort key of the claim item that makes a (currency,
// country) pair unique within a company.
func walletPairSK(currency, countryISO string) string {
	return "WALLETPAIR#" + currency + "#" + countryISO
}

// walletRefPK is the partition of the lookup item that maps a wallet id to
// its company; only the operator console reads it, because it alone knows a
// wallet id without a company.
func walletRefPK(walletID string) string { return "WALLETREF#" + walletID }

// walletRefSK is the sort key of the wallet id lookup item.
func walletRefSK() string { return "WALLETREF" }

// ledgerSK is the sort key of a wallet transaction (ledger entry) in its
// company's partition; ids are UUID v7, so the keys are time-ordered.
func ledgerSK(txID string) string { return ledgerSKPrefix + txID }

// ledgerSKPrefix starts the sort key of every ledger entry of a company.
const ledgerSKPrefix = "WTX#"

// walletLedgerPK is the GSI1 partition of one wallet's ledger entries
// (GSI1SK is ledgerSK).
func walletLedgerPK(companyID, walletID string) string {
	return companyPK(companyID) + "#WALLET#" + walletID
}

// openFundingIndex names the GSI2 index of the fundings declared and not
// yet decided, sharded (shardKey): the sweeper asks the bank about them.
const openFundingIndex = "OPEN_FUNDING"

// openFundingGSI2PK is the shard of the open-funding index of funding id.
func openFundingGSI2PK(id string) string { return shardKey(openFundingIndex, id) }

// openFundingGSI2SK orders the fundings of a shard by when they were
// declared, and names them.
func openFundingGSI2SK(created, companyID, id string) string {
	return created + "#" + companyID + "#" + id
}

// creditRefSK is the sort key of the claim item that lets a sandbox credit
// reference be used once per company.
func creditRefSK(reference string) string { return "CREDITREF#" + reference }

// Fundings (see Funds).

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

// Debts (see Debts).

// Item kinds of debts.
const (
	kindDebt        = "debt"
	kindPendingDebt = "debt_pending"
)

// debtSK is the sort key of a debt in its company's partition; ids are
// UUID v7, so the keys are time-ordered.
func debtSK(id string) string { return debtSKPrefix + id }

// debtSKPrefix starts the sort key of every debt of a company.
const debtSKPrefix = "DEBT#"

// pendingDebtSK is the sort key of the marker a debt has while it is
// pending.
func pendingDebtSK(id string) string { return pendingDebtSKPrefix + id }

// pendingDebtSKPrefix starts the sort key of every pending debt's marker.
const pendingDebtSKPrefix = "PENDINGDEBT#"

// Idempotency keys (see Idempotency).

// idempotencySK is the sort key of the record of an Idempotency-Key in its
// company's partition.
func idempotencySK(key string) string { return "IDEMPOTENCY#" + key }

// Payments (see Payments).

// Item kinds and keys of payments.
const (
	kindPayment     = "payment"
	kindExternalID  = "external_id"
	kindPaymentRef  = "payment_ref"
	paymentSKPrefix = "PAY#"
	reconcileGSI1PK = "RECONCILE"
)

// paymentSK is the sort key of a payment in its company's partition.
func paymentSK(id string) string { return paymentSKPrefix + id }

// externalIDSK is the sort key of the claim of an external_id.
func externalIDSK(externalID string) string { return "EXTID#" + externalID }

// paymentRefPK is the partition of the lookup item that maps a payment id
// to its company (the operator console knows only the id).
func paymentRefPK(id string) string { return "PAYREF#" + id }

const paymentRefSK = "PAYREF"

// openPaymentIndex names the GSI2 index of the payments the worker polls
// the operator about, sharded (shardKey).
const openPaymentIndex = "OPEN_PAYMENT"

// openPaymentGSI2PK is the shard of the open-payment index of payment id.
func openPaymentGSI2PK(id string) string { return shardKey(openPaymentIndex, id) }

// openPaymentGSI2SK orders the payments of an OPEN_PAYMENT shard by when
// the worker expects them, and names them.
func openPaymentGSI2SK(due, companyID, id string) string { return timedRef(due, companyID, id) }

// timedRef is the sort key of an index that orders the records of every
// company by a time: the time, the company and the record's id.
func timedRef(at, companyID, id string) string { return at + "#" + companyID + "#" + id }

// splitTimedRef returns the company and the id of a timedRef.
func splitTimedRef(sk string) (companyID, id string, err error) {
	parts := strings.SplitN(sk, "#", 3)
	if len(parts) != 3 {
		return "", "", fmt.Errorf("store: malformed index key %s", sk)
	}
	return parts[1], parts[2], nil
}

// Bulk payout batches (see Bulk).

// Item kinds and keys of batches.
const (
	kindBulkBatch   = "bulk_batch"
	kindBulkChunk   = "bulk_chunk"
	bulkSKPrefix    = "BULK#"
	openBulkGSI2PK  = "OPEN_BULK"
	bulkChunkPrefix = "BULKROWS#"
)

// bulkSK is the sort key of a batch in its company's partition; ids are
// UUID v7, so the keys are time-ordered. A chunk's key (bulkChunkSK) does
// not start with bulkSKPrefix.
func bulkSK(id string) string { return bulkSKPrefix + id }

// bulkChunkSK is the sort key of chunk n of batch id.
func bulkChunkSK(id string, n int) string { return fmt.Sprintf("%s%04d", bulkChunksOf(id), n) }

// bulkChunksOf starts the sort key of every chunk of batch id.
func bulkChunksOf(id string) string { return bulkChunkPrefix + id + "#" }

// Cards (see Cards).

// Item kinds and keys of cards.
const (
	kindCard        = "card"
	kindCardSlots   = "card_slots"
	kindCardTx      = "card_tx"
	kindCardReveal  = "card_reveal"
	kindCardSecrets = "card_secrets"
	cardSKPrefix    = "CARD#"
	cardTxSKPrefix  = "CTX#"
	cardSlotsSK     = "CARDSLOTS"
	openCardTxIndex = "OPEN_CARDTX"
	openHoldIndex   = "OPEN_HOLD"
	// openTerminationIndex holds the terminated cards whose open holds
	// are not all released yet.
	openTerminationIndex = "OPEN_TERMINATION"
)

// cardSK is the sort key of a card in its company's partition. The slot
// count's key, CARDSLOTS, does not start with cardSKPrefix.
func cardSK(id string) string { return cardSKPrefix + id }

// cardSecretsSK is the sort key, in its company's partition, of the item
// that holds card id's sealed number and CVV. It carries no index key: no
// index ever copies them. It does not start with cardSKPrefix.
func cardSecretsSK(id string) string { return "CARDSECRETS#" + id }

// cardTxSK is the sort key of a card transaction in its company's
// partition; ids are UUID v7, so the keys are time-ordered.
func cardTxSK(id string) string { return cardTxSKPrefix + id }

// customerCardsPK is the GSI1 partition of one customer's cards (GSI1SK is
// cardSK).
func customerCardsPK(companyID, customerID string) string {
	return companyPK(companyID) + "#CUSTOMER#" + customerID
}

// cardTxsPK is the GSI1 partition of one card's transactions (GSI1SK is
// cardTxSK).
func cardTxsPK(companyID, cardID string) string {
	return companyPK(companyID) + "#CARD#" + cardID
}

// revealSKPrefix starts the sort key of every reveal record of a card.
func revealSKPrefix(cardID string) string { return "REVEAL#" + cardID + "#" }

// cardRefPK is the partition of the lookup item that maps a card id to its
// company: the issuer's notifications name our card, not its company.
func cardRefPK(cardID string) string { return "CARDREF#" + cardID }

// cardRefSK is the sort key of the card id lookup item.
const cardRefSK = "CARDREF"

// issuerEventSK is the sort key of the claim of an issuer notification
// applied to one of the company's cards.
func issuerEventSK(id string) string { return "ISSUEREVENT#" + id }

// revealSK is the sort key of a reveal record; ids are UUID v7.
func revealSK(cardID, id string) string { return revealSKPrefix(cardID) + id }

// openCardTxGSI2PK is the shard of the open card transaction index of
// transaction id.
func openCardTxGSI2PK(id string) string { return shardKey(openCardTxIndex, id) }

// openCardTxGSI2SK orders the open transactions of a shard by creation
// time, and names them.
func openCardTxGSI2SK(created, companyID, id string) string {
	return created + "#" + companyID + "#" + id
}

// openHoldGSI2PK is the shard of the open hold index of authorization id:
// an authorization is in it while its hold is open, so that the sweeper
// finds the holds old enough to expire.
func openHoldGSI2PK(id string) string { return shardKey(openHoldIndex, id) }

// openHoldGSI2SK orders the open holds of a shard by creation time, and
// names them (as openCardTxGSI2SK).
func openHoldGSI2SK(created, companyID, id string) string {
	return openCardTxGSI2SK(created, companyID, id)
}

// openTerminationGSI2PK is the shard of the open termination index of
// card id: a terminated card is in it while it keeps money for open holds,
// so that the sweeper finds the cards whose holds are still to release.
func openTerminationGSI2PK(id string) string { return shardKey(openTerminationIndex, id) }

// openTerminationGSI2SK orders the terminated cards of a shard by the time
// of their termination, and names them (as openCardTxGSI2SK).
func openTerminationGSI2SK(terminated, companyID, id string) string {
	return openCardTxGSI2SK(terminated, companyID, id)
}

// issuerTxSK is the sort key of the lookup of a network transaction.
func issuerTxSK(id string) string { return "ISSUERTX#" + id }

// Card disputes (see cards_disputes.go).

// Item kinds and keys of disputes.
const (
	kindCardDispute    = "card_dispute"
	kindCardDisputeTx  = "card_dispute_tx"
	kindCardDisputeRef = "card_dispute_ref"
	disputeSKPrefix    = "DISPUTE#"
)

// disputeSK is the sort key of a dispute in its company's partition; ids
// are UUID v7, so the keys are time-ordered. The claims below do not start
// with disputeSKPrefix.
func disputeSK(id string) string { return disputeSKPrefix + id }

// disputeTxSK is the sort key of the claim of a settlement by its dispute.
func disputeTxSK(txID string) string { return "DISPUTETX#" + txID }

// issuerDisputeSK is the sort key of the lookup of a dispute by the
// issuer's id.
func issuerDisputeSK(issuerID string) string { return "ISSUERDISPUTE#" + issuerID }

// customerTxsPK is the GSI3 partition of one customer's card transactions
// (GSI3SK is cardTxSK).
func customerTxsPK(companyID, customerID string) string {
	return customerCardsPK(companyID, customerID) + "#CTX"
}

// Customers (see Customers).

const (
	kindCustomer      = "customer"
	kindCustomerClaim = "customer_claim"
	kindCustomerRef   = "customer_ref"
	customerSKPrefix  = "CUSTOMER#"
	// kycReviewGSI1PK is the GSI1 partition of the customers of every
	// company waiting for the operator console's review (PENDING_REVIEW);
	// GSI1SK is the customer id, a UUID v7: oldest first. A customer leaves
	// it when decided.
	kycReviewGSI1PK = "KYC_REVIEW"
)

func customerSK(id string) string { return customerSKPrefix + id }

// customerRefPK is the partition of the lookup item that maps a customer id
// to its company (the operator console knows only the id).
func customerRefPK(id string) string { return "CUSTREF#" + id }

const customerRefSK = "CUSTREF"

// customerClaimSK is the sort key of the claim of a compared value of
// kind (EMAIL, IDNUMBER).
func customerClaimSK(kind, value string) string {
	sum := sha256.Sum256([]byte(value))
	return "CUSTCLAIM#" + kind + "#" + hex.EncodeToString(sum[:])
}

// Events (see Outbox) and their webhook deliveries (see Webhooks).

const (
	kindEvent     = "event"
	outboxIndex   = "OUTBOX"
	eventSKPrefix = "EVT#"
	// dispatchIndex names the GSI2 index of the events published (queued
	// for the webhook worker) that the worker has not yet taken, keyed by
	// when they were published: the sweeper publishes again those whose
	// message was lost.
	dispatchIndex = "DISPATCH"
	// pendingDeliveryIndex names the GSI2 index of the PENDING webhook
	// deliveries, keyed by when each last moved (created, an attempt
	// recorded, queued again by the sweeper): the sweeper queues again the
	// next attempt of those that stopped moving.
	pendingDeliveryIndex = "PENDING_DELIVERY"
)

// eventGSI2SK orders the events of an OUTBOX shard by their creation, and
// those of a DISPATCH shard by when they were published.
func eventGSI2SK(at, id string) string { return at + "#" + id }

// pendingDeliveryGSI2SK orders the deliveries of a PENDING_DELIVERY shard
// by when each last moved.
func pendingDeliveryGSI2SK(moved, companyID, id string) string { return timedRef(moved, companyID, id) }

func eventSK(id string) string { return eventSKPrefix + id }

// sequenceSK is the sort key of the counter of the events about object
// (see sequence.go), in its company's partition.
func sequenceSK(object string) string { return "SEQ#" + object }

const kindSequence = "event_sequence"

// webhookItemsPrefix starts the sort key of every webhook endpoint item of
// a company: the console's, the others and their count.
const webhookItemsPrefix = "WEBHOOK_"

// webhookSecretSK is the sort key of the console endpoint's item, which
// holds the company's signing secret.
func webhookSecretSK() string { return webhookItemsPrefix + "SECRET" }

// webhookEndpointSK is the sort key of an endpoint the company created.
func webhookEndpointSK(id string) string { return webhookItemsPrefix + "ENDPOINT#" + id }

// webhookEndpointCountSK is the sort key of the count of the endpoints the
// company created.
func webhookEndpointCountSK() string { return webhookItemsPrefix + "ENDPOINTS" }

// deliverySK is the sort key of a delivery: right after its event's.
func deliverySK(deliveryID string) string {
	eventID, rest, _ := strings.Cut(deliveryID, "#")
	return eventSK(eventID) + deliverySKInfix + rest
}

const deliverySKInfix = "#DLV#"

const (
	kindWebhookSecret        = "webhook_secret"
	kindWebhookEndpoint      = "webhook_endpoint"
	kindWebhookEndpointCount = "webhook_endpoint_count"
	kindWebhookDelivery      = "webhook_delivery"
)

// Rates and fees (see Rates, Fees).

// rateSKPrefix starts the sort key of every rate of a company.
const rateSKPrefix = "RATE#"

// rateSK is the sort key of the rate of a currency pair.
func rateSK(from, to string) string { return rateSKPrefix + from + "#" + to }

// rateVersionSK is the sort key of a version of a rate. Its prefix does
// not start with rateSKPrefix: Rates lists current rates only.
func rateVersionSK(id string) string { return "RATEVERSION#" + id }

const feeScheduleSK = "FEES"

// Reconciliations (see Reconciliations): outside every company's
// partition, as they are about the providers' records of every company.

const (
	kindReconciliation      = "reconciliation"
	kindReconciliationState = "reconciliation_state"
	// reconciliationPK is the one partition of the reconciliation
	// reports and of each provider's state: a run an hour per provider.
	reconciliationPK       = "RECONCILIATION"
	reconciliationSKPrefix = "RUN#"
)

// reconciliationSK is the sort key of a report; ids are UUID v7, so the
// keys are time-ordered.
func reconciliationSK(id string) string { return reconciliationSKPrefix + id }

// reconciliationStateSK is the sort key of a provider's state (its latest
// run, the end of its last completed window). It does not start with
// reconciliationSKPrefix.
func reconciliationStateSK(provider string) string { return "PROVIDER#" + provider }

// cardIndex names the GSI3 index of every company's cards, sharded
// (shardKey; GSI3SK the card id): the reconciliation sums their balances.
const cardIndex = "CARDS"

// cardGSI3PK is the shard of the card index of card id.
func cardGSI3PK(id string) string { return shardKey(cardIndex, id) }

// createdPaymentIndex names the GSI3 index of every company's payments by
// their creation, sharded (shardKey; GSI3SK "<created_at>#<company
// id>#<id>", a timedRef): the reconciliation asks the operator about the
// payments of its window.
const createdPaymentIndex = "PAYMENT_CREATED"

// createdPaymentGSI3PK is the shard of the created-payment index of
// payment id.
func createdPaymentGSI3PK(id string) string { return shardKey(createdPaymentIndex, id) }

// createdPaymentGSI3SK orders the payments of a shard by creation, and
// names them.
func createdPaymentGSI3SK(created, companyID, id string) string {
	return timedRef(created, companyID, id)
}
