package dashboard

import (
	"encoding/csv"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"time"

	"payments/pkg/money"
	"payments/pkg/page"
	"payments/pkg/sessions"
	"payments/pkg/spreadsheet"
	"payments/pkg/wallets"
	"payments/pkg/wallets/walletshttp"
)

// transactionsPage is how many ledger entries a page of Transactions
// shows; exportPage how many the export reads at a time.
const (
	transactionsPage = 25
	exportPage       = 100
)

// MaxExportRows is the most entries one export holds: behind API Gateway
// a Lambda function's answer is at most 6 MB, about 30,000 rows of the
// export. A larger selection is refused, with the advice to narrow it,
// rather than cut short.
const MaxExportRows = 30000

// transactionsRoutes are the Transactions pages.
func (h *Handler) transactionsRoutes() []route {
	return []route{
		{"GET /dashboard/transactions", ReadMoney, h.transactionsList},
		{"GET /dashboard/transactions/export.csv", Export, h.exportTransactions},
		{"GET /dashboard/transactions/{id}", ReadMoney, h.transactionPage},
	}
}

// transactionFilter is the list's filters as the form shows them.
type transactionFilter struct {
	WalletID, Type, Status, From, To string
}

// transactionsData is the Transactions page's.
type transactionsData struct {
	Filter    transactionFilter
	Wallets   []walletRow
	Types     []wallets.Type
	Statuses  []wallets.Status
	Rows      []transactionRow
	Total     int
	Page      int
	Next      string
	Export    string
	CanExport bool
}

// transactionQuery reads the filters of r's query string by the API's own
// rules (walletshttp.ParseTransactionQuery), but that a To date, which a
// person means to include, ends at the end of that day.
func transactionQuery(r *http.Request) (wallets.TransactionQuery, transactionFilter, error) {
	v := r.URL.Query()
	f := transactionFilter{WalletID: v.Get("wallet_id"), Type: v.Get("type"), Status: v.Get("status"), From: v.Get("from_date"), To: v.Get("to_date")}
	q, err := walletshttp.ParseTransactionQuery(r)
	if err == nil && len(f.To) == len(time.DateOnly) {
		q.To = q.To.Add(24 * time.Hour)
	}
	return q, f, err
}

// filterValues returns f as a query string's values.
func (f transactionFilter) values() url.Values {
	v := url.Values{}
	for k, s := range map[string]string{"wallet_id": f.WalletID, "type": f.Type, "status": f.Status, "from_date": f.From, "to_date": f.To} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return v
}

// transactionsList shows a page of the company's ledger, filtered.
func (h *Handler) transactionsList(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	d := transactionsData{Types: wallets.Types, Statuses: wallets.Statuses, CanExport: Allowed(s.Role, Export), Page: 1}
	ws, err := h.deps.Wallets.List(r.Context(), s.CompanyID)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	for _, wl := range ws {
		d.Wallets = append(d.Wallets, walletRow{ID: wl.ID, Currency: wl.Currency, Country: wl.Country})
	}
	p, ok := h.listPage(w, r, s, transactionsPage)
	if !ok {
		return
	}
	q, f, err := transactionQuery(r)
	d.Filter = f
	var res page.Result[wallets.Transaction]
	if err == nil {
		res, err = h.deps.Wallets.Transactions(r.Context(), s.CompanyID, q, p)
	}
	if err != nil {
		msg, _, ok := h.refusal(err)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.render(w, r, http.StatusBadRequest, "transactions", view{Title: "Transactions", Nav: "transactions", Error: msg, Data: d})
		return
	}
	d.Total, d.Page = res.Total, p.Page
	for _, t := range res.Items {
		d.Rows = append(d.Rows, transactionRowOf(t))
	}
	v := f.values()
	d.Export = "/dashboard/transactions/export.csv"
	if len(v) > 0 {
		d.Export += "?" + v.Encode()
	}
	d.Next = nextLink(r, s, p, res.Total, res.Next)
	h.render(w, r, http.StatusOK, "transactions", view{Title: "Transactions", Nav: "transactions", Data: d})
}

// transactionRowOf returns ledger entry t as a row of a list.
func transactionRowOf(t wallets.Transaction) transactionRow {
	return transactionRow{ID: t.ID, Date: when(t.CreatedAt), Type: string(t.Type), Status: string(t.Status),
		Reference: t.Reference, Amount: Amount(t.Amount, t.Currency)}
}

// exportColumns are the export's header row.
var exportColumns = []string{"id", "created_at", "wallet_id", "type", "status", "currency", "amount", "fee", "reference", "operator", "phone_number", "payment_id"}

// exportTransactions answers the company's ledger entries that match the
// filters as CSV, newest first, every one of them (at most MaxExportRows:
// a larger selection is refused before anything is written). The rows are
// written as each page is read; every text cell is guarded against
// spreadsheet formulas (spreadsheet.Text).
func (h *Handler) exportTransactions(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	q, _, err := transactionQuery(r)
	if err != nil {
		msg, _, ok := h.refusal(err)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.message(w, r, http.StatusBadRequest, "Export refused", msg)
		return
	}
	p := page.Request{Page: 1, Limit: exportPage}
	first, err := h.deps.Wallets.Transactions(r.Context(), s.CompanyID, q, p)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	if first.Total > MaxExportRows {
		h.message(w, r, http.StatusRequestEntityTooLarge, "Export too large",
			fmt.Sprintf("These filters select %d transactions; an export holds at most %d. Choose a shorter date range.", first.Total, MaxExportRows))
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="transactions.csv"`)
	cw := csv.NewWriter(w)
	cw.Write(exportColumns)
	for res := first; ; {
		for _, t := range res.Items {
			cw.Write([]string{t.ID, t.CreatedAt.UTC().Format(time.RFC3339), t.WalletID, string(t.Type), string(t.Status), t.Currency,
				money.Format(t.Amount, t.Currency), money.Format(t.FeeAmount, t.Currency), spreadsheet.Text(t.Reference),
				spreadsheet.Text(t.Operator), spreadsheet.Text(t.PhoneNumber), t.PaymentID})
		}
		cw.Flush()
		if res.Next == "" {
			return
		}
		p = p.Following(res.Next, res.Total)
		if res, err = h.deps.Wallets.Transactions(r.Context(), s.CompanyID, q, p); err != nil {
			// The answer has begun: the file ends short, and says so in
			// its last line; the failure is logged.
			slog.ErrorContext(r.Context(), "dashboard: export transactions", "error", err)
			cw.Write([]string{"# the export failed here: it is incomplete; export again"})
			cw.Flush()
			return
		}
	}
}

// transactionData is a ledger entry's page.
type transactionData struct {
	ID, Wallet, Type, Status, Amount, Fee, Net, Reference, Operator, Phone, OrderID string
	Balance, Before, After, Created, Completed, PaymentID                           string
}

// transactionPage shows one of the company's ledger entries, with a link
// to its payment when it belongs to one.
func (h *Handler) transactionPage(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	t, err := h.deps.Wallets.Transaction(r.Context(), s.CompanyID, r.PathValue("id"))
	if errors.Is(err, wallets.ErrTransactionNotFound) {
		h.notFound(w, r)
		return
	}
	if err != nil {
		h.failed(w, r, err)
		return
	}
	d := transactionData{ID: t.ID, Wallet: t.WalletID, Type: string(t.Type), Status: string(t.Status),
		Amount: Amount(t.Amount, t.Currency), Fee: Amount(t.FeeAmount, t.Currency), Net: Amount(t.NetAmount, t.Currency),
		Reference: t.Reference, Operator: t.Operator, Phone: t.PhoneNumber, OrderID: t.OrderID, Balance: string(t.Balance),
		Created: when(t.CreatedAt), PaymentID: t.PaymentID}
	if t.BalanceBefore != nil && t.BalanceAfter != nil {
		d.Before, d.After = Amount(*t.BalanceBefore, t.Currency), Amount(*t.BalanceAfter, t.Currency)
	}
	if t.CompletedAt != nil {
		d.Completed = when(*t.CompletedAt)
	}
	h.render(w, r, http.StatusOK, "transaction", view{Title: "Transaction " + t.ID, Nav: "transactions", Data: d})
}
