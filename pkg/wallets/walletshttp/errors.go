package walletshttp

import (
	"net/http"

	"payments/pkg/httpapi"
	"payments/pkg/wallets"
)

// Errors are the answers to the errors of package wallets: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
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
}
