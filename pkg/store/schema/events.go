package schema

import "strings"

// Events (the outbox) and their webhook deliveries.

// KindEvent is the type of an event item.
const KindEvent = "event"

// EventSKPrefix starts the sort key of every event of a company.
const EventSKPrefix = "EVT#"

// Sharded GSI2 indexes of events and deliveries (ShardKey).
const (
	// OutboxIndex names the GSI2 index of the events not yet published.
	OutboxIndex = "OUTBOX"
	// DispatchIndex names the GSI2 index of the events published (queued
	// for the webhook worker) that the worker has not yet taken, keyed by
	// when they were published: the sweeper publishes again those whose
	// message was lost.
	DispatchIndex = "DISPATCH"
	// PendingDeliveryIndex names the GSI2 index of the PENDING webhook
	// deliveries, keyed by when each last moved (created, an attempt
	// recorded, queued again by the sweeper): the sweeper queues again the
	// next attempt of those that stopped moving.
	PendingDeliveryIndex = "PENDING_DELIVERY"
)

// EventSK is the sort key of an event in its company's partition.
func EventSK(id string) string { return EventSKPrefix + id }

// EventGSI2SK orders the events of an OUTBOX shard by their creation, and
// those of a DISPATCH shard by when they were published.
func EventGSI2SK(at, id string) string { return at + "#" + id }

// PendingDeliveryGSI2SK orders the deliveries of a PENDING_DELIVERY shard
// by when each last moved.
func PendingDeliveryGSI2SK(moved, companyID, id string) string { return TimedRef(moved, companyID, id) }

// SequenceSK is the sort key of the counter of the events about object,
// in its company's partition.
func SequenceSK(object string) string { return "SEQ#" + object }

// KindSequence is the type of an event counter.
const KindSequence = "event_sequence"

// WebhookItemsPrefix starts the sort key of every webhook endpoint item of
// a company: the console's, the others and their count.
const WebhookItemsPrefix = "WEBHOOK_"

// WebhookSecretSK is the sort key of the console endpoint's item, which
// holds the company's signing secret.
const WebhookSecretSK = "WEBHOOK_SECRET"

// WebhookEndpointSK is the sort key of an endpoint the company created.
func WebhookEndpointSK(id string) string { return "WEBHOOK_ENDPOINT#" + id }

// WebhookEndpointCountSK is the sort key of the count of the endpoints the
// company created.
const WebhookEndpointCountSK = "WEBHOOK_ENDPOINTS"

// DeliverySKInfix joins an event's sort key and the rest of a delivery's
// id in the delivery's sort key.
const DeliverySKInfix = "#DLV#"

// DeliverySK is the sort key of a delivery: right after its event's.
func DeliverySK(deliveryID string) string {
	eventID, rest, _ := strings.Cut(deliveryID, "#")
	return EventSK(eventID) + DeliverySKInfix + rest
}

// Item kinds of webhook endpoints and deliveries.
const (
	KindWebhookSecret        = "webhook_secret"
	KindWebhookEndpoint      = "webhook_endpoint"
	KindWebhookEndpointCount = "webhook_endpoint_count"
	KindWebhookDelivery      = "webhook_delivery"
)

// The state of the scan for webhook secrets in clear: one item, outside
// every company's partition.
const (
	ClearSecretsPK   = "MIGRATION#WEBHOOK_SECRETS"
	ClearSecretsSK   = "STATE"
	KindClearSecrets = "webhook_secrets_sealing"
)

// Rates and fees.

// Item kinds of rates.
const (
	KindExchangeRate        = "exchange_rate"
	KindExchangeRateVersion = "exchange_rate_version"
)

// RateSKPrefix starts the sort key of every rate of a company.
const RateSKPrefix = "RATE#"

// RateSK is the sort key of the rate of a currency pair.
func RateSK(from, to string) string { return RateSKPrefix + from + "#" + to }

// RateVersionSK is the sort key of a version of a rate. Its prefix does
// not start with RateSKPrefix: a list of rates reads current rates only.
func RateVersionSK(id string) string { return "RATEVERSION#" + id }

// FeeScheduleSK is the sort key of a company's fee schedule.
const FeeScheduleSK = "FEES"

// Reconciliations: outside every company's partition, as they are about
// the providers' records of every company.

// Item kinds of reconciliations.
const (
	KindReconciliation      = "reconciliation"
	KindReconciliationState = "reconciliation_state"
)

// ReconciliationPK is the one partition of the reconciliation reports and
// of each provider's state: a run an hour per provider.
const ReconciliationPK = "RECONCILIATION"

// ReconciliationSKPrefix starts the sort key of every report.
const ReconciliationSKPrefix = "RUN#"

// ReconciliationSK is the sort key of a report; ids are UUID v7, so the
// keys are time-ordered.
func ReconciliationSK(id string) string { return ReconciliationSKPrefix + id }

// ReconciliationStateSK is the sort key of a provider's state (its latest
// run, the end of its last completed window). It does not start with
// ReconciliationSKPrefix.
func ReconciliationStateSK(provider string) string { return "PROVIDER#" + provider }

// CreatedPaymentIndex names the GSI3 index of every company's payments by
// their creation, sharded (ShardKey; GSI3SK "<created_at>#<company
// id>#<id>", a TimedRef): the reconciliation asks the operator about the
// payments of its window.
const CreatedPaymentIndex = "PAYMENT_CREATED"

// CreatedPaymentGSI3PK is the shard of the created-payment index of
// payment id.
func CreatedPaymentGSI3PK(id string) string { return ShardKey(CreatedPaymentIndex, id) }

// CreatedPaymentGSI3SK orders the payments of a shard by creation, and
// names them.
func CreatedPaymentGSI3SK(created, companyID, id string) string {
	return TimedRef(created, companyID, id)
}
