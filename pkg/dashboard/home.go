package dashboard

import (
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"payments/pkg/money"
	"payments/pkg/page"
	"payments/pkg/sessions"
	"payments/pkg/wallets"
)

// lastTransactions is how many ledger entries Home shows.
const lastTransactions = 10

// walletRow is one wallet on Home, its amounts formatted.
type walletRow struct {
	ID, Currency, Country              string
	Active                             bool
	Payin, Payout, Reserved, Available string
}

// transactionRow is one ledger entry on Home.
type transactionRow struct {
	ID, Date, Type, Status, Reference, Amount string
}

// homeData is Home's.
type homeData struct {
	Wallets      []walletRow
	Transactions []transactionRow
	CanExport    bool
	Chart        chart
}

// homeRoutes are Home's pages.
func (h *Handler) homeRoutes() []route {
	return []route{
		{"GET /dashboard", ReadMoney, h.home},
	}
}

// home shows each wallet's balances and the last transactions.
func (h *Handler) home(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	ws, err := h.deps.Wallets.List(r.Context(), s.CompanyID)
	if err != nil {
		h.failed(w, r, err)
		return
	}
	txs, err := h.deps.Wallets.Transactions(r.Context(), s.CompanyID, wallets.TransactionQuery{}, page.Request{Page: 1, Limit: lastTransactions})
	if err != nil {
		h.failed(w, r, err)
		return
	}
	c, err := h.newChart(r.Context(), s.CompanyID, h.deps.Now())
	if err != nil {
		h.failed(w, r, err)
		return
	}
	d := homeData{CanExport: Allowed(s.Role, Export), Chart: c}
	for _, wl := range ws {
		d.Wallets = append(d.Wallets, walletRow{
			ID: wl.ID, Currency: wl.Currency, Country: wl.Country, Active: wl.IsActive,
			Payin: Amount(wl.PayinBalance, wl.Currency), Payout: Amount(wl.PayoutBalance, wl.Currency),
			Reserved: Amount(wl.PayoutReserved, wl.Currency), Available: Amount(wl.PayoutAvailable, wl.Currency),
		})
	}
	for _, t := range txs.Items {
		d.Transactions = append(d.Transactions, transactionRowOf(t))
	}
	h.render(w, r, http.StatusOK, "home", view{Title: "Home", Nav: "home", Data: d})
}

// failed answers a service's failure with a page that says so.
func (h *Handler) failed(w http.ResponseWriter, r *http.Request, err error) {
	slog.ErrorContext(r.Context(), "dashboard: read", "error", err)
	h.message(w, r, http.StatusServiceUnavailable, "Temporarily unavailable", "This page could not be read just now. Please try again in a moment.")
}

// Amount formats minor units of currency for a person: its major units
// with the currency's decimals, thousands grouped ("1,234.50 USD",
// "15,000 XAF"), from the integer alone, never through a float.
func Amount(minor int64, currency string) string {
	exp, err := money.Exponent(currency)
	if err != nil {
		exp = 0
	}
	neg := minor < 0
	u := uint64(minor)
	if neg {
		u = -u
	}
	digits := strconv.FormatUint(u, 10)
	if len(digits) <= exp {
		digits = strings.Repeat("0", exp-len(digits)+1) + digits
	}
	whole, frac := digits[:len(digits)-exp], digits[len(digits)-exp:]
	var b strings.Builder
	if neg {
		b.WriteString("−")
	}
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if exp > 0 {
		b.WriteByte('.')
		b.WriteString(frac)
	}
	return b.String() + " " + currency
}
