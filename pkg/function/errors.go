package function

import (
	"fmt"
	"net/http"

	"payments/pkg/auth"
	"payments/pkg/bulk"
	"payments/pkg/cards"
	"payments/pkg/companies"
	"payments/pkg/contention"
	"payments/pkg/customers"
	"payments/pkg/debts"
	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/fx"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency"
	"payments/pkg/issuerhooks"
	"payments/pkg/limits"
	"payments/pkg/payments"
	"payments/pkg/providers/operator"
	"payments/pkg/reconcile"
	"payments/pkg/wallets"
	"payments/pkg/webhooks"
)

// Errors is the one catalogue that maps domain errors to HTTP: status, stable
// code and the message clients see. Every HTTP function writes its errors
// through it.
var Errors = httpapi.Catalogue{
	// companies and auth
	{Err: companies.ErrNotFound, Status: http.StatusNotFound, Code: "COMPANY_NOT_FOUND", Message: "company not found"},
	{Err: companies.ErrKYBNotApproved, Status: http.StatusForbidden, Code: "KYB_NOT_APPROVED", Message: "KYB not approved"},
	{Err: auth.ErrInvalidCredentials, Status: http.StatusUnauthorized, Code: "INVALID_CLIENT_CREDENTIALS", Message: "invalid client credentials"},
	{Err: auth.ErrRateLimited, Status: http.StatusTooManyRequests, Code: "RATE_LIMIT_EXCEEDED", Message: "rate limit exceeded"},

	// wallets
	{Err: wallets.ErrNotFound, Status: http.StatusNotFound, Code: "WALLET_NOT_FOUND", Message: "wallet not found"},
	{Err: wallets.ErrUSDWalletNotFound, Status: http.StatusNotFound, Code: "USD_WALLET_NOT_FOUND", Message: "USD wallet not found"},
	{Err: wallets.ErrNoUSDWallet, Status: http.StatusBadRequest, Code: "NO_USD_WALLET", Message: "no USD wallet"},
	{Err: wallets.ErrTransactionNotFound, Status: http.StatusNotFound, Code: "TRANSACTION_NOT_FOUND", Message: "transaction not found"},
	{Err: wallets.ErrExists, Status: http.StatusBadRequest, Code: "WALLET_EXISTS", Message: "wallet for this currency and country already exists"},
	{Err: wallets.ErrInvalidCombination, Status: http.StatusBadRequest, Code: "INVALID_COMBINATION", Message: "invalid country and currency combination"},
	{Err: wallets.ErrDuplicateReference, Status: http.StatusConflict, Code: "DUPLICATE_REFERENCE", Message: "this reference was used by another credit (another wallet, balance or amount)"},
	{Err: wallets.ErrCreditDisabled, Status: http.StatusForbidden, Code: "CREDIT_DISABLED", Message: "sandbox credits are disabled in production mode"},
	{Err: wallets.ErrInactive, Status: http.StatusBadRequest, Code: "WALLET_INACTIVE", Message: "wallet is not active"},
	{Err: wallets.ErrInsufficientBalance, Status: http.StatusBadRequest, Code: "INSUFFICIENT_BALANCE", Message: "insufficient balance including fees"},
	{Err: wallets.ErrInsufficientWalletBalance, Status: http.StatusBadRequest, Code: "INSUFFICIENT_WALLET_BALANCE", Message: "insufficient wallet balance"},
	{Err: wallets.ErrFundingFinal, Status: http.StatusConflict, Code: "FUNDING_FINAL", Message: "funding is already confirmed or rejected: it cannot be decided again"},

	// payments and fees (spec §7: the payout 400s)
	{Err: payments.ErrNotFound, Status: http.StatusNotFound, Code: "PAYMENT_NOT_FOUND", Message: "transaction not found"},
	{Err: bulk.ErrNotFound, Status: http.StatusNotFound, Code: "BULK_BATCH_NOT_FOUND", Message: "bulk payout batch not found"},
	{Err: payments.ErrDuplicateExternalID, Status: http.StatusBadRequest, Code: "DUPLICATE_EXTERNAL_ID", Message: "duplicate external_id"},
	{Err: payments.ErrNoWallet, Status: http.StatusBadRequest, Code: "NO_WALLET", Message: "no wallet for this country and currency"},
	{Err: fees.ErrOperatorUnavailable, Status: http.StatusBadRequest, Code: "OPERATOR_UNAVAILABLE", Message: "operator not available for this country and currency"},
	{Err: payments.ErrNoOperator, Status: http.StatusServiceUnavailable, Code: "NO_OPERATOR", Message: "payouts and collections are not available: no operator is configured"},
	{Err: fees.ErrNoRule, Status: http.StatusBadRequest, Code: "NO_FEE_RULE", Message: "no fee rule of the company applies to this payment"},
	{Err: payments.ErrFinal, Status: http.StatusConflict, Code: "PAYMENT_FINAL", Message: "transaction is already final: it cannot be resolved again"},
	{Err: payments.ErrNotFlagged, Status: http.StatusConflict, Code: "PAYMENT_NOT_FLAGGED", Message: "transaction does not require reconciliation: the worker is still handling it"},

	// the reconciliation with the providers (docs/reconciliation.md)
	{Err: reconcile.ErrNotFound, Status: http.StatusNotFound, Code: "RECONCILIATION_NOT_FOUND", Message: "reconciliation not found"},
	{Err: reconcile.ErrRunning, Status: http.StatusConflict, Code: "RECONCILIATION_RUNNING", Message: "a reconciliation of this provider is running: see GET /admin/reconciliations"},
	{Err: reconcile.ErrNotReconciled, Status: http.StatusConflict, Code: "PROVIDER_NOT_RECONCILED", Message: "this provider's records cannot be read by this deployment: none is configured, or its adapter lists none"},

	// customers (spec §7: enrolment)
	{Err: customers.ErrNotFound, Status: http.StatusNotFound, Code: "CUSTOMER_NOT_FOUND", Message: "customer not found"},
	{Err: customers.ErrDuplicate, Status: http.StatusConflict, Code: "DUPLICATE_CUSTOMER", Message: "customer with this email or ID already exists"},
	{Err: customers.ErrDocumentNotFetched, Status: http.StatusUnprocessableEntity, Code: "DOCUMENT_NOT_FETCHED", Message: "could not fetch a document URL"},
	{Err: customers.ErrDocumentUnreadable, Status: http.StatusUnprocessableEntity, Code: "DOCUMENT_UNREADABLE", Message: "KYC document unreadable"},
	{Err: customers.ErrFileTooLarge, Status: http.StatusRequestEntityTooLarge, Code: "FILE_TOO_LARGE", Message: "file larger than 2 MB"},
	{Err: customers.ErrNotMultipart, Status: http.StatusUnsupportedMediaType, Code: "UNSUPPORTED_MEDIA_TYPE", Message: "Content-Type must be multipart/form-data"},
	{Err: customers.ErrNoProviders, Status: http.StatusServiceUnavailable, Code: "NO_KYC_PROVIDER", Message: "customer sync is not available: no card issuer is configured"},
	{Err: customers.ErrKYCDecided, Status: http.StatusConflict, Code: "KYC_ALREADY_DECIDED", Message: "the customer's identity is already decided (VERIFIED or REJECTED): it cannot be decided again"},
	{Err: customers.ErrVerifierUnavailable, Status: http.StatusServiceUnavailable, Code: "KYC_UNAVAILABLE", Message: "identity verification temporarily unavailable: nothing was stored, retry shortly", RetryAfter: 5},
	{Err: customers.ErrIssuerUnavailable, Status: http.StatusServiceUnavailable, Code: "ISSUER_UNAVAILABLE", Message: "card issuer temporarily unavailable: retry shortly", RetryAfter: 5},

	// cards (spec §7: card funding, freeze and unfreeze, lists)
	{Err: cards.ErrNotFound, Status: http.StatusNotFound, Code: "CARD_NOT_FOUND", Message: "card not found"},
	{Err: cards.ErrNoCards, Status: http.StatusNotFound, Code: "NO_CARDS", Message: "customer has no cards"},
	{Err: cards.ErrTransactionNotFound, Status: http.StatusNotFound, Code: "TRANSACTION_NOT_FOUND", Message: "transaction not found"},
	{Err: cards.ErrCustomerNotVerified, Status: http.StatusBadRequest, Code: "CUSTOMER_NOT_VERIFIED", Message: "customer KYC not verified"},
	{Err: cards.ErrNoSlots, Status: http.StatusBadRequest, Code: "NO_CARD_SLOTS", Message: "no card slots available"},
	{Err: cards.ErrInsufficientCard, Status: http.StatusBadRequest, Code: "INSUFFICIENT_CARD_BALANCE", Message: "insufficient card balance"},
	{Err: cards.ErrNotActive, Status: http.StatusBadRequest, Code: "CARD_NOT_ACTIVE", Message: "card not active"},
	{Err: cards.ErrAlreadyFrozen, Status: http.StatusBadRequest, Code: "CARD_ALREADY_FROZEN", Message: "card already frozen"},
	{Err: cards.ErrNotFrozen, Status: http.StatusBadRequest, Code: "CARD_NOT_FROZEN", Message: "card not frozen"},
	{Err: cards.ErrTerminated, Status: http.StatusBadRequest, Code: "CARD_TERMINATED", Message: "card terminated"},
	{Err: cards.ErrLocked, Status: http.StatusBadRequest, Code: "CARD_LOCKED", Message: "card is locked; unfreeze with unlock=true"},
	{Err: cards.ErrNotAuthorization, Status: http.StatusBadRequest, Code: cards.RefusalCode(cards.ErrNotAuthorization), Message: "transaction is not an authorization with a hold"},
	{Err: cards.ErrAlreadySettled, Status: http.StatusBadRequest, Code: cards.RefusalCode(cards.ErrAlreadySettled), Message: "authorization already settled"},
	{Err: cards.ErrAlreadyReversed, Status: http.StatusBadRequest, Code: cards.RefusalCode(cards.ErrAlreadyReversed), Message: "authorization already reversed"},
	{Err: cards.ErrExceedsHold, Status: http.StatusBadRequest, Code: cards.RefusalCode(cards.ErrExceedsHold), Message: "amount exceeds the hold"},
	{Err: cards.ErrNotSettled, Status: http.StatusBadRequest, Code: cards.RefusalCode(cards.ErrNotSettled), Message: "authorization not settled: nothing to refund"},
	{Err: cards.ErrExceedsSettled, Status: http.StatusBadRequest, Code: cards.RefusalCode(cards.ErrExceedsSettled), Message: "amount exceeds what was settled and not refunded"},
	{Err: cards.ErrDuplicateNetworkTx, Status: http.StatusConflict, Code: cards.RefusalCode(cards.ErrDuplicateNetworkTx), Message: "the card network reported this transaction before"},
	{Err: cards.ErrIssuerUnavailable, Status: http.StatusBadGateway, Code: "CARD_ISSUER_UNAVAILABLE", Message: "card issuer temporarily unavailable: check the card and the wallet before retrying", RetryAfter: 5},
	{Err: cards.ErrIssuerDeclined, Status: http.StatusUnprocessableEntity, Code: "ISSUER_DECLINED", Message: "declined by the card issuer: the movement was reversed, nothing moved"},
	{Err: limits.ErrRateLimited, Status: http.StatusTooManyRequests, Code: "RATE_LIMITED", Message: "the company's requests of this kind exceed its rate limit: retry after Retry-After seconds"},
	{Err: cards.ErrRevealLimitExceeded, Status: http.StatusTooManyRequests, Code: "REVEAL_LIMIT_EXCEEDED", Message: "the company's card reveals for this hour are spent: retry after Retry-After seconds"},
	{Err: cards.ErrRevealNotAudited, Status: http.StatusServiceUnavailable, Code: "REVEAL_NOT_AUDITED", Message: "the reveal could not be recorded, so nothing was revealed: retry shortly", RetryAfter: 1},
	{Err: cards.ErrRevealSessionRequired, Status: http.StatusBadRequest, Code: "REVEAL_SESSION_REQUIRED", Message: "card numbers are not revealed here in production mode: create a reveal session (POST /cards/{id}/reveal-sessions) and show the card with Stripe's Issuing Elements"},
	{Err: cards.ErrNoIssuer, Status: http.StatusServiceUnavailable, Code: "NO_CARD_ISSUER", Message: "cards are not available: no card issuer is configured"},
	{Err: cards.ErrDisputeNotFound, Status: http.StatusNotFound, Code: "DISPUTE_NOT_FOUND", Message: "dispute not found"},
	{Err: cards.ErrNotDisputable, Status: http.StatusBadRequest, Code: "TRANSACTION_NOT_DISPUTABLE", Message: "only a settlement with an amount not refunded can be disputed"},
	{Err: cards.ErrDisputeExists, Status: http.StatusConflict, Code: "DISPUTE_EXISTS", Message: "the transaction is disputed already: see GET /cards/disputes"},
	{Err: cards.ErrDisputeDeclined, Status: http.StatusUnprocessableEntity, Code: "DISPUTE_DECLINED", Message: "the card issuer refused the dispute: nothing moved"},
	{Err: cards.ErrNoDisputes, Status: http.StatusServiceUnavailable, Code: "NO_DISPUTE_ISSUER", Message: "disputes are not available: the card issuer takes none"},

	// exchange rates
	{Err: fx.ErrNoRate, Status: http.StatusBadRequest, Code: "NO_EXCHANGE_RATE", Message: "no exchange rate configured for the pair"},
	{Err: fx.ErrRateChanged, Status: http.StatusBadRequest, Code: "RATE_CHANGED", Message: "exchange rate has changed; request a new quote"},
	{Err: fx.ErrChanged, Status: http.StatusConflict, Code: "CONFLICT", Message: "the rate is being changed by another request: retry shortly", RetryAfter: 1},

	// debts
	{Err: debts.ErrInvalidStatus, Status: http.StatusBadRequest, Code: "INVALID_FIELD", Message: "must be PENDING or RECOVERED"},

	// the card issuer's notifications (POST /issuer/webhooks)
	{Err: issuerhooks.ErrBadSignature, Status: http.StatusUnauthorized, Code: "INVALID_SIGNATURE", Message: "missing, malformed, stale or forged X-Issuer-Signature"},
	{Err: issuerhooks.ErrBadStripeSignature, Status: http.StatusUnauthorized, Code: "INVALID_SIGNATURE", Message: "missing, malformed, stale or forged Stripe-Signature"},

	// the operator's callbacks (POST /operator/callbacks/pawapay)
	{Err: operator.ErrCallbackSignature, Status: http.StatusUnauthorized, Code: "INVALID_SIGNATURE", Message: "missing, malformed, stale or forged callback signature (Signature, Signature-Input, Content-Digest)"},
	{Err: operator.ErrCallbackMalformed, Status: http.StatusBadRequest, Code: "INVALID_CALLBACK", Message: "the callback is not a status of a payout or a deposit"},

	// webhooks
	{Err: events.ErrNotFound, Status: http.StatusNotFound, Code: "EVENT_NOT_FOUND", Message: "event not found"},
	{Err: webhooks.ErrNoDestination, Status: http.StatusConflict, Code: "NO_WEBHOOK_DESTINATION", Message: "event has no destination: no enabled webhook endpoint takes its kind"},
	{Err: webhooks.ErrEndpointNotFound, Status: http.StatusNotFound, Code: "WEBHOOK_ENDPOINT_NOT_FOUND", Message: "webhook endpoint not found"},
	{Err: webhooks.ErrTooManyEndpoints, Status: http.StatusBadRequest, Code: "TOO_MANY_WEBHOOK_ENDPOINTS", Message: fmt.Sprintf("a company may have at most %d webhook endpoints: delete one first", webhooks.MaxEndpoints)},

	// Idempotency-Key (docs/idempotency.md)
	{Err: idempotency.ErrKeyReused, Status: http.StatusUnprocessableEntity, Code: "IDEMPOTENCY_KEY_REUSED", Message: "this Idempotency-Key was used with a different request"},
	{Err: idempotency.ErrKeyInUse, Status: http.StatusConflict, Code: "IDEMPOTENCY_KEY_IN_USE", Message: "a request with this Idempotency-Key is still running: retry shortly", RetryAfter: 1},
	{Err: idempotency.ErrLeaseLost, Status: http.StatusConflict, Code: "IDEMPOTENCY_KEY_IN_USE", Message: "a retry with this Idempotency-Key took the request over: retry shortly for its answer", RetryAfter: 1},
	{Err: idempotency.ErrResponseNotStored, Status: http.StatusInternalServerError, Code: "IDEMPOTENCY_RESPONSE_NOT_STORED", Message: "the request with this Idempotency-Key ran once, but its response was too large to keep: look its result up rather than retrying"},

	// writes that kept losing races with other writes (the store's), and
	// the domain's records changed by another request first
	// (payments.ErrStatusChanged, cards.ErrChanged), which wrap it
	{Err: contention.ErrConflict, Status: http.StatusConflict, Code: "CONFLICT", Message: "the record is being changed by other requests: retry shortly", RetryAfter: 1},

	// a dependency (DynamoDB, SQS) slow or throttling, after the SDK's
	// retries: last, so that a domain error wrapping one keeps its own
	// answer
	{Is: Unavailable, Status: http.StatusServiceUnavailable, Code: "TEMPORARILY_UNAVAILABLE", Message: "the service is slow to answer: retry shortly (with the same Idempotency-Key, a request that moves money is safe to retry)", RetryAfter: 2},
}
