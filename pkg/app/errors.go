package app

import (
	"net/http"

	"payments/pkg/auth"
	"payments/pkg/companies"
	"payments/pkg/httpapi"
	"payments/pkg/wallets"
)

// Errors is the one catalogue that maps domain errors to HTTP: status, stable
// code and the message clients see. Every HTTP function writes its errors
// through it.
var Errors = httpapi.Catalogue{
	// companies and auth
	{Err: companies.ErrNotFound, Status: http.StatusNotFound, Code: "COMPANY_NOT_FOUND", Message: "company not found"},
	{Err: auth.ErrInvalidCredentials, Status: http.StatusUnauthorized, Code: "INVALID_CLIENT_CREDENTIALS", Message: "invalid client credentials"},
	{Err: auth.ErrRateLimited, Status: http.StatusTooManyRequests, Code: "RATE_LIMIT_EXCEEDED", Message: "rate limit exceeded"},

	// wallets
	{Err: wallets.ErrNotFound, Status: http.StatusNotFound, Code: "WALLET_NOT_FOUND", Message: "wallet not found"},
	{Err: wallets.ErrUSDWalletNotFound, Status: http.StatusNotFound, Code: "USD_WALLET_NOT_FOUND", Message: "USD wallet not found"},
	{Err: wallets.ErrTransactionNotFound, Status: http.StatusNotFound, Code: "TRANSACTION_NOT_FOUND", Message: "transaction not found"},
	{Err: wallets.ErrExists, Status: http.StatusBadRequest, Code: "WALLET_EXISTS", Message: "wallet for this currency and country already exists"},
	{Err: wallets.ErrInvalidCombination, Status: http.StatusBadRequest, Code: "INVALID_COMBINATION", Message: "invalid country and currency combination"},
	{Err: wallets.ErrKYBNotApproved, Status: http.StatusForbidden, Code: "KYB_NOT_APPROVED", Message: "KYB not approved"},
	{Err: wallets.ErrDuplicateReference, Status: http.StatusConflict, Code: "DUPLICATE_REFERENCE", Message: "a credit with this reference already exists"},
	{Err: wallets.ErrInactive, Status: http.StatusBadRequest, Code: "WALLET_INACTIVE", Message: "wallet is not active"},
	{Err: wallets.ErrInsufficientFunds, Status: http.StatusBadRequest, Code: "INSUFFICIENT_BALANCE", Message: "insufficient wallet balance"},
	{Err: wallets.ErrBusy, Status: http.StatusConflict, Code: "WALLET_BUSY", Message: "wallet is being updated by other requests, retry"},
}
