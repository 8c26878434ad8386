package metrics

// The service's metrics (docs/operations.md says which function writes
// each and which alarm watches it).
const (
	// PayoutsAccepted counts payouts accepted.
	PayoutsAccepted = "PayoutsAccepted"
	// PayoutsSettled counts payouts that reached SUCCESS.
	PayoutsSettled = "PayoutsSettled"
	// PayoutsFailed counts payouts that reached FAILED (and were refunded).
	PayoutsFailed = "PayoutsFailed"
	// PayoutsToReconciliation counts payouts flagged for reconciliation.
	PayoutsToReconciliation = "PayoutsToReconciliation"
	// CollectionsAccepted counts collections accepted.
	CollectionsAccepted = "CollectionsAccepted"
	// CollectionsSettled counts collections that reached SUCCESS.
	CollectionsSettled = "CollectionsSettled"
	// CollectionsFailed counts collections that reached FAILED.
	CollectionsFailed = "CollectionsFailed"
	// CollectionsToReconciliation counts collections flagged for
	// reconciliation.
	CollectionsToReconciliation = "CollectionsToReconciliation"
	// PaymentsAwaitingReconciliationOverAnHour is the number of payments
	// flagged for reconciliation, not resolved, and accepted more than an
	// hour ago, measured by every sweep.
	PaymentsAwaitingReconciliationOverAnHour = "PaymentsAwaitingReconciliationOverAnHour"
	// CardMovementsOpenPastWindow is the number of card movements a sweep
	// found open past its window and could not finish.
	CardMovementsOpenPastWindow = "CardMovementsOpenPastWindow"
	// WebhookDeliveriesSucceeded counts deliveries answered 2xx.
	WebhookDeliveriesSucceeded = "WebhookDeliveriesSucceeded"
	// WebhookDeliveriesRetried counts failed attempts with another to come.
	WebhookDeliveriesRetried = "WebhookDeliveriesRetried"
	// WebhookDeliveriesFailed counts deliveries given up for good.
	WebhookDeliveriesFailed = "WebhookDeliveriesFailed"
	// WebhookDeliveryDelay is the time from an event's creation to its
	// receiver's 2xx.
	WebhookDeliveryDelay = "WebhookDeliveryDelay"
	// AuthorizationsApproved counts card authorizations approved (a
	// retried request's answer is not counted again).
	AuthorizationsApproved = "AuthorizationsApproved"
	// AuthorizationsDeclined counts card authorizations declined.
	AuthorizationsDeclined = "AuthorizationsDeclined"
	// AuthorizationsApprovedWithoutUs counts card authorizations the
	// issuer or the network approved without our answer, recorded as
	// holds all the same.
	AuthorizationsApprovedWithoutUs = "AuthorizationsApprovedWithoutUs"
	// CardsRevealed counts the reveals of a card's number and CVV.
	CardsRevealed = "CardsRevealed"
	// CardRevealsRefused counts the reveals refused because the company
	// spent its hourly quota (REVEAL_LIMIT_PER_HOUR).
	CardRevealsRefused = "CardRevealsRefused"
	// RateLimited counts the requests refused 429 RATE_LIMITED because
	// their company's bucket for the route's class was empty (dimension
	// Class: read, money, reveal).
	RateLimited = "RateLimited"
	// RateLimiterUnavailable counts the requests admitted without their
	// company's limit because its bucket could not be read or written
	// (dimension Class).
	RateLimiterUnavailable = "RateLimiterUnavailable"
	// AuthorizationDecisionLatency is the time taken to answer one card
	// authorization request, a retry's included.
	AuthorizationDecisionLatency = "AuthorizationDecisionLatency"
	// InternalErrors counts the answers 500 of an HTTP function: errors
	// the catalogue does not know.
	InternalErrors = "InternalErrors"
	// IdempotentReplays counts requests answered from the record of their
	// Idempotency-Key.
	IdempotentReplays = "IdempotentReplays"
	// ConflictsRetried counts writes that lost a race and were tried again.
	ConflictsRetried = "ConflictsRetried"
	// ConflictsGivenUp counts writes that lost every try.
	ConflictsGivenUp = "ConflictsGivenUp"
	// AdminAuthFailures counts the requests to the operator console (the
	// admin routes) its guard refused: in a deployed stage, one carrying
	// the shared admin key or naming no IAM principal; on the local stack,
	// one with no admin key, a wrong one, or more than one.
	AdminAuthFailures = "AdminAuthFailures"
	// AuditFailures counts the audit records of the operator console's
	// changes that could not be written: a change refused for its
	// Requested record, or made without its Answered record (pkg/audit).
	AuditFailures = "AuditFailures"
	// ReconciliationMismatches counts what a reconciliation found that our
	// ledger does not follow of a provider's records (pkg/reconcile).
	ReconciliationMismatches = "ReconciliationMismatches"
)

// Gauges are the metrics that measure a level (recorded with Gauge):
// their Maximum is what to watch, their sum means nothing.
var Gauges = []string{PaymentsAwaitingReconciliationOverAnHour, CardMovementsOpenPastWindow}
