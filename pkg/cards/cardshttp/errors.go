package cardshttp

import (
	"net/http"

	"payments/pkg/cards"
	"payments/pkg/httpapi"
)

// Errors are the answers to the errors of package cards: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
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
	{Err: cards.ErrRevealLimitExceeded, Status: http.StatusTooManyRequests, Code: "REVEAL_LIMIT_EXCEEDED", Message: "the company's card reveals for this hour are spent: retry after Retry-After seconds"},
	{Err: cards.ErrRevealNotAudited, Status: http.StatusServiceUnavailable, Code: "REVEAL_NOT_AUDITED", Message: "the reveal could not be recorded, so nothing was revealed: retry shortly", RetryAfter: 1},
	{Err: cards.ErrRevealSessionRequired, Status: http.StatusBadRequest, Code: "REVEAL_SESSION_REQUIRED", Message: "card numbers are not revealed here in production mode: create a reveal session (POST /cards/{id}/reveal-sessions) and show the card with Stripe's Issuing Elements"},
	{Err: cards.ErrNoIssuer, Status: http.StatusServiceUnavailable, Code: "NO_CARD_ISSUER", Message: "cards are not available: no card issuer is configured"},
	{Err: cards.ErrDisputeNotFound, Status: http.StatusNotFound, Code: "DISPUTE_NOT_FOUND", Message: "dispute not found"},
	{Err: cards.ErrNotDisputable, Status: http.StatusBadRequest, Code: "TRANSACTION_NOT_DISPUTABLE", Message: "only a settlement with an amount not refunded can be disputed"},
	{Err: cards.ErrDisputeExists, Status: http.StatusConflict, Code: "DISPUTE_EXISTS", Message: "the transaction is disputed already: see GET /cards/disputes"},
	{Err: cards.ErrDisputeDeclined, Status: http.StatusUnprocessableEntity, Code: "DISPUTE_DECLINED", Message: "the card issuer refused the dispute: nothing moved"},
	{Err: cards.ErrNoDisputes, Status: http.StatusServiceUnavailable, Code: "NO_DISPUTE_ISSUER", Message: "disputes are not available: the card issuer takes none"},
}
