// Package walletshttp is the HTTP layer of pkg/wallets: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package walletshttp

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"payments/pkg/field"
	"payments/pkg/httpapi"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// TransactionsPageSize is the default page size of the wallet-transaction
// lists (spec §8).
const TransactionsPageSize = 10

// Routes registers the company routes of the wallets function.
func Routes(rt *httpapi.Router, svc *wallets.Service) {
	h := handlers{svc}
	rt.Handle("POST /wallets", h.create)
	rt.Handle("GET /wallets", h.list)
	rt.Handle("GET /partner/wallets", h.partnerList)
	rt.Handle("GET /wallet/usd-balance", h.usdBalance)
	rt.Handle("GET /wallet/transactions", h.transactions)
	rt.Handle("GET /wallet/transactions/{id}", h.transaction)
	rt.Handle("GET /wallet/transactions/wallet/{walletId}", h.walletTransactions)
	rt.Handle("POST /wallets/{id}/transfer-internal", h.transferInternal, httpapi.Money())
	rt.Handle("POST /wallets/fund", h.fund, httpapi.Money())
}

// PaymentRoutes registers the read-only balance route of the payments
// function (spec §4.13).
func PaymentRoutes(rt *httpapi.Router, b *wallets.Balances) {
	rt.Handle("GET /payment/balance", func(w http.ResponseWriter, r *http.Request) error { return paymentBalanceRoute(b, w, r) })
}

// AdminRoutes registers the operator console routes of wallets: the
// sandbox credit, POST /admin/wallets/{walletId}/credit, and the decision
// on a declared bank transfer, POST
// /admin/wallet-funds/{transactionId}/confirm and …/reject.
func AdminRoutes(rt *httpapi.Router, svc *wallets.Service) {
	h := handlers{svc}
	rt.Handle("POST /admin/wallets/{walletId}/credit", h.credit)
	rt.Handle("POST /admin/wallet-funds/{transactionId}/confirm", h.confirmFunding)
	rt.Handle("POST /admin/wallet-funds/{transactionId}/reject", h.rejectFunding)
}

type handlers struct{ svc *wallets.Service }

func (h handlers) create(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	var in wallets.CreateInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	wallet, err := h.svc.Create(r.Context(), cid, in)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusCreated, "Wallet created successfully", NewWalletResponse(wallet))
	return nil
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	ws, err := h.svc.List(r.Context(), cid)
	if err != nil {
		return err
	}
	out := make([]WalletResponse, len(ws))
	for i, x := range ws {
		out[i] = NewWalletResponse(x)
	}
	httpapi.Respond(w, http.StatusOK, fmt.Sprintf("%d items retrieved successfully", len(out)), out)
	return nil
}

func (h handlers) partnerList(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	ws, err := h.svc.List(r.Context(), cid)
	if err != nil {
		return err
	}
	out := make([]partnerWallet, len(ws))
	for i, x := range ws {
		out[i] = partnerWallet{
			ID:            x.ID,
			Currency:      x.Currency,
			Country:       x.Country,
			Balance:       money.JSON(x.Balance(), x.Currency),
			PayinBalance:  money.JSON(x.PayinBalance, x.Currency),
			PayoutBalance: money.JSON(x.PayoutBalance, x.Currency),
			IsActive:      x.IsActive,
		}
	}
	httpapi.Respond(w, http.StatusOK, fmt.Sprintf("%d items retrieved successfully", len(out)), out)
	return nil
}

func (h handlers) usdBalance(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	x, err := h.svc.USDWallet(r.Context(), cid)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "USD balance retrieved successfully", usdBalance{
		WalletID:        x.ID,
		Currency:        x.Currency,
		Balance:         money.JSON(x.Balance(), x.Currency),
		PayinBalance:    money.JSON(x.PayinBalance, x.Currency),
		PayoutBalance:   money.JSON(x.PayoutBalance, x.Currency),
		PayoutReserved:  money.JSON(x.PayoutReserved, x.Currency),
		PayoutAvailable: money.JSON(x.PayoutAvailable, x.Currency),
	})
	return nil
}

// paymentBalanceRoute answers GET /payment/balance from b.
func paymentBalanceRoute(b *wallets.Balances, w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	at := b.Time()
	ws, err := b.List(r.Context(), cid)
	if err != nil {
		return err
	}
	out := paymentBalance{Balances: make([]balanceEntry, len(ws)), UpdatedAt: timestamp.Format(at)}
	for i, x := range ws {
		out.Balances[i] = balanceEntry{
			Currency:      x.Currency,
			Country:       x.CountryISOCode,
			PayinBalance:  money.JSON(x.PayinBalance, x.Currency),
			PayoutBalance: money.JSON(x.PayoutBalance, x.Currency),
		}
	}
	httpapi.Respond(w, http.StatusOK, "Balance retrieved successfully", out)
	return nil
}

func (h handlers) transaction(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	t, err := h.svc.Transaction(r.Context(), cid, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Wallet transaction retrieved successfully", NewTransactionResponse(t))
	return nil
}

func (h handlers) walletTransactions(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r, TransactionsPageSize)
	if err != nil {
		return err
	}
	res, err := h.svc.WalletTransactions(r.Context(), cid, r.PathValue("walletId"), page)
	if err != nil {
		return err
	}
	httpapi.RespondList(w, transactionResponses(res.Items), httpapi.Pagination(r, page, res.Total, res.Next))
	return nil
}

func (h handlers) transactions(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	q, err := ParseTransactionQuery(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r, TransactionsPageSize)
	if err != nil {
		return err
	}
	res, err := h.svc.Transactions(r.Context(), cid, q, page)
	if err != nil {
		return err
	}
	httpapi.RespondList(w, transactionResponses(res.Items), httpapi.Pagination(r, page, res.Total, res.Next))
	return nil
}

// ParseTransactionQuery reads the filters of GET /wallet/transactions:
// wallet_id (UUID), type and status (enums), currency (a supported ISO 4217
// code), from_date (inclusive) and to_date (exclusive) as RFC 3339
// date-times or YYYY-MM-DD dates (midnight UTC). A bad value is a 400 naming
// the parameter.
func ParseTransactionQuery(r *http.Request) (wallets.TransactionQuery, error) {
	v := r.URL.Query()
	var q wallets.TransactionQuery
	if s := v.Get("wallet_id"); s != "" {
		if !ids.IsUUID(s) {
			return q, field.Invalid("wallet_id", "must be a UUID")
		}
		q.WalletID = s
	}
	if s := v.Get("type"); s != "" {
		if !slices.Contains(wallets.Types, wallets.Type(s)) {
			return q, field.Invalid("type", "must be one of "+joinEnum(wallets.Types))
		}
		q.Type = wallets.Type(s)
	}
	if s := v.Get("status"); s != "" {
		if !slices.Contains(wallets.Statuses, wallets.Status(s)) {
			return q, field.Invalid("status", "must be one of "+joinEnum(wallets.Statuses))
		}
		q.Status = wallets.Status(s)
	}
	if s := v.Get("currency"); s != "" {
		if !money.Supported(s) {
			return q, field.Invalid("currency", "must be a supported ISO 4217 code")
		}
		q.Currency = s
	}
	var err error
	q.From, q.To, err = httpapi.ParseDateRange(r)
	return q, err
}

func joinEnum[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	return strings.Join(s, ", ")
}

// creditRequest is the body of POST /admin/wallets/{walletId}/credit.
type creditRequest struct {
	Balance   string          `json:"balance"`
	Amount    json.RawMessage `json:"amount"`
	Reference string          `json:"reference"`
}

// creditResult is the data of a credit: replayed is true when the
// reference named a credit already applied, which is answered again.
type creditResult struct {
	Wallet      WalletResponse      `json:"wallet"`
	Transaction TransactionResponse `json:"transaction"`
	Replayed    bool                `json:"replayed"`
}

// amountText is the JSON value of a request's amount field as the service
// reads it: "" when the field is absent or null.
func amountText(raw json.RawMessage) string {
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

func (h handlers) credit(w http.ResponseWriter, r *http.Request) error {
	var req creditRequest
	if err := httpapi.Decode(r, &req); err != nil {
		return err
	}
	in := wallets.CreditInput{Balance: wallets.SubBalance(req.Balance), Amount: amountText(req.Amount), Reference: req.Reference}
	c, err := h.svc.Credit(r.Context(), r.PathValue("walletId"), in)
	if err != nil {
		return err
	}
	msg := "Wallet credited successfully"
	if c.Replayed {
		msg = "Wallet already credited with this reference"
	}
	httpapi.Respond(w, http.StatusOK, msg, creditResult{
		Wallet: NewWalletResponse(c.Wallet), Transaction: NewTransactionResponse(c.Transaction), Replayed: c.Replayed,
	})
	return nil
}

// fundRequest is the body of POST /wallets/fund.
type fundRequest struct {
	WalletID  string          `json:"wallet_id"`
	Amount    json.RawMessage `json:"amount"`
	Balance   string          `json:"balance"`
	Reference string          `json:"reference"`
}

func (h handlers) fund(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	var req fundRequest
	if err := httpapi.Decode(r, &req); err != nil {
		return err
	}
	in := wallets.FundInput{WalletID: req.WalletID, Amount: amountText(req.Amount), Balance: wallets.SubBalance(req.Balance), Reference: req.Reference}
	f, err := h.svc.Fund(r.Context(), cid, in)
	if err != nil {
		return err
	}
	if f.Replayed {
		httpapi.Respond(w, http.StatusOK, "Funding already declared with this reference", NewTransactionResponse(f.Transaction))
		return nil
	}
	httpapi.Respond(w, http.StatusAccepted, "Funding declared: the wallet is credited when the transfer is received", NewTransactionResponse(f.Transaction))
	return nil
}

func (h handlers) confirmFunding(w http.ResponseWriter, r *http.Request) error {
	f, err := h.svc.ConfirmFunding(r.Context(), r.PathValue("transactionId"), httpapi.Operator(r.Context()))
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Funding confirmed: the wallet is credited", NewTransactionResponse(f))
	return nil
}

func (h handlers) rejectFunding(w http.ResponseWriter, r *http.Request) error {
	f, err := h.svc.RejectFunding(r.Context(), r.PathValue("transactionId"), httpapi.Operator(r.Context()))
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Funding rejected: nothing is credited", NewTransactionResponse(f))
	return nil
}

// transferRequest is the body of POST /wallets/{id}/transfer-internal.
type transferRequest struct {
	Amount json.RawMessage `json:"amount"`
	From   string          `json:"from"`
	To     string          `json:"to"`
}

// transferResponse is the data of a transfer.
type transferResponse struct {
	TransferID string             `json:"transfer_id"`
	WalletID   string             `json:"wallet_id"`
	Amount     json.Number        `json:"amount"`
	FeeAmount  json.Number        `json:"fee_amount"`
	From       wallets.SubBalance `json:"from"`
	To         wallets.SubBalance `json:"to"`
	Wallet     WalletResponse     `json:"wallet"`
}

func (h handlers) transferInternal(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	var req transferRequest
	if err := httpapi.Decode(r, &req); err != nil {
		return err
	}
	in := wallets.TransferInput{Amount: amountText(req.Amount), From: wallets.SubBalance(req.From), To: wallets.SubBalance(req.To)}
	t, err := h.svc.TransferInternal(r.Context(), cid, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	cur := t.Wallet.Currency
	httpapi.Respond(w, http.StatusOK, "Transfer completed successfully", transferResponse{
		TransferID: t.ID, WalletID: t.WalletID,
		Amount: money.JSON(t.Amount, cur), FeeAmount: money.JSON(t.Fee, cur),
		From: t.From, To: t.To, Wallet: NewWalletResponse(t.Wallet),
	})
	return nil
}
