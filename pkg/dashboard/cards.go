package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"payments/pkg/cards"
	"payments/pkg/contention"
	"payments/pkg/customers"
	"payments/pkg/page"
	"payments/pkg/sessions"
)

// Cards is what the dashboard does with a company's cards
// (cards.Manager): read them, list them with their statistics, read their
// transactions, freeze and unfreeze them. Nothing of it reveals a card's
// number or CVC.
type Cards interface {
	List(ctx context.Context, companyID string, q cards.ListQuery) ([]cards.Card, cards.Statistics, error)
	Card(ctx context.Context, companyID, id string) (cards.Card, error)
	CustomerCards(ctx context.Context, companyID, customerID string) ([]cards.Card, error)
	ListTransactions(ctx context.Context, companyID, id string, q cards.TxQuery) (page.Result[cards.TxView], error)
	Freeze(ctx context.Context, companyID, cardID string, lock bool) (cards.Card, error)
	Unfreeze(ctx context.Context, companyID, cardID string, unlock bool) (cards.Card, error)
}

// cardTransactionsPage is how many transactions a card's page shows.
const cardTransactionsPage = 20

// cardRow is one card: its last 4 digits masked, never its number.
type cardRow struct {
	ID, Number, Holder, HolderID, Brand, Status, Balance, Created string
	Frozen, Locked, Live                                          bool
}

// statRow is one figure of the cards' statistics.
type statRow struct{ Term, Value string }

// cardsData is the cards list's.
type cardsData struct {
	Statistics []statRow
	Cards      []cardRow
}

// cardTxRow is one transaction of a card.
type cardTxRow struct {
	Date, Type, Status, Description, Amount, Fee string
}

// cardData is a card's page.
type cardData struct {
	Card         cardRow
	Fields       []fieldRow
	Transactions []cardTxRow
	Total        int
	Next         string
	CanManage    bool
}

// cardsRoutes are the Cards pages: reading is every role's, freezing and
// unfreezing need ManageCards.
func (h *Handler) cardsRoutes() []route {
	return []route{
		{"GET /dashboard/cards", ReadMoney, h.cardsList},
		{"GET /dashboard/cards/{id}", ReadMoney, h.card},
		{"POST /dashboard/cards/{id}/freeze", ManageCards, h.freezeCard},
		{"POST /dashboard/cards/{id}/unfreeze", ManageCards, h.unfreezeCard},
	}
}

// cardsList shows the company's cards with their statistics.
func (h *Handler) cardsList(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	cs, st, err := h.deps.Cards.List(r.Context(), s.CompanyID, cards.ListQuery{})
	if err != nil {
		h.failed(w, r, err)
		return
	}
	names := h.holders(r.Context(), s.CompanyID)
	d := cardsData{Statistics: []statRow{
		{"Cards", strconv.Itoa(st.Total)}, {"Active", strconv.Itoa(st.Active)}, {"Frozen", strconv.Itoa(st.Frozen)},
		{"Pending", strconv.Itoa(st.Pending)}, {"Terminated", strconv.Itoa(st.Terminated)}, {"Failed", strconv.Itoa(st.Failed)},
		{"Total balance", Amount(st.TotalBalance, cards.Currency)}, {"Card slots left", strconv.Itoa(st.AvailableSlots)},
	}}
	for _, c := range cs {
		name, err := names(c.CustomerID)
		if err != nil {
			h.failed(w, r, err)
			return
		}
		d.Cards = append(d.Cards, cardRowOf(c, name))
	}
	h.render(w, r, http.StatusOK, "cards", view{Title: "Cards", Nav: "cards", Data: d})
}

// holders returns a function that names a customer of the company,
// reading each once.
func (h *Handler) holders(ctx context.Context, companyID string) func(id string) (string, error) {
	names := map[string]string{}
	return func(id string) (string, error) {
		if n, ok := names[id]; ok {
			return n, nil
		}
		c, err := h.deps.Customers.Get(ctx, companyID, id)
		if err != nil {
			return "", fmt.Errorf("dashboard: the holder of a card: %w", err)
		}
		names[id] = customerRowOf(c).Name
		return names[id], nil
	}
}

// card shows a card of the company and a page of its transactions.
func (h *Handler) card(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	v := view{}
	switch r.URL.Query().Get("done") {
	case "frozen":
		v.Notice = "Card frozen."
	case "unfrozen":
		v.Notice = "Card unfrozen."
	}
	h.showCard(w, r, s, http.StatusOK, v)
}

// showCard renders card {id}'s page with v's message and status.
func (h *Handler) showCard(w http.ResponseWriter, r *http.Request, s sessions.Session, status int, v view) {
	id := r.PathValue("id")
	c, err := h.deps.Cards.Card(r.Context(), s.CompanyID, id)
	if errors.Is(err, cards.ErrNotFound) {
		h.notFound(w, r)
		return
	}
	if err != nil {
		h.failed(w, r, err)
		return
	}
	p := page.Request{Page: 1, Limit: cardTransactionsPage}
	if r.Method == http.MethodGet {
		var ok bool
		if p, ok = h.listPage(w, r, s, cardTransactionsPage); !ok {
			return
		}
	}
	txs, err := h.deps.Cards.ListTransactions(r.Context(), s.CompanyID, c.ID, cards.TxQuery{Page: p})
	if errors.Is(err, page.ErrBadCursor) {
		h.badPageLink(w, r)
		return
	}
	if err != nil {
		h.failed(w, r, err)
		return
	}
	holder, err := h.deps.Customers.Get(r.Context(), s.CompanyID, c.CustomerID)
	if err != nil && !errors.Is(err, customers.ErrNotFound) {
		h.failed(w, r, err)
		return
	}
	row := cardRowOf(c, customerRowOf(holder).Name)
	d := cardData{Card: row, Total: txs.Total, CanManage: Allowed(s.Role, ManageCards), Fields: []fieldRow{
		{"Card", row.Number}, {"Brand", row.Brand}, {"Status", row.Status}, {"Balance", row.Balance},
		{"Available", Amount(c.Available(), cards.Currency)}, {"Expires", expiry(c)}, {"Created", row.Created},
	}}
	if r.Method == http.MethodGet {
		d.Next = nextLink(r, s, p, txs.Total, txs.Next)
	}
	for _, t := range txs.Items {
		d.Transactions = append(d.Transactions, cardTxRowOf(t.Tx))
	}
	v.Title, v.Nav, v.Data = "Card "+row.Number, "cards", d
	h.render(w, r, status, "card", v)
}

// freezeCard freezes a card of the company, as PUT /cards/{id}/freeze
// does without lock.
func (h *Handler) freezeCard(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	h.changeCard(w, r, s, "Card frozen", "frozen", func(ctx context.Context, id string) (cards.Card, error) {
		return h.deps.Cards.Freeze(ctx, s.CompanyID, id, false)
	})
}

// unfreezeCard unfreezes a card of the company, as PUT
// /cards/{id}/unfreeze does without unlock: a card locked through the API
// stays frozen (ErrLocked).
func (h *Handler) unfreezeCard(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	h.changeCard(w, r, s, "Card unfrozen", "unfrozen", func(ctx context.Context, id string) (cards.Card, error) {
		return h.deps.Cards.Unfreeze(ctx, s.CompanyID, id, false)
	})
}

// changeCard makes a change to card {id}, records it as action and sees
// the card again (done tells its page what was done); a refusal is said
// on the card's page.
func (h *Handler) changeCard(w http.ResponseWriter, r *http.Request, s sessions.Session, action, done string,
	change func(context.Context, string) (cards.Card, error)) {
	id := r.PathValue("id")
	c, err := change(r.Context(), id)
	if errors.Is(err, cards.ErrNotFound) {
		h.notFound(w, r)
		return
	}
	if err != nil {
		status, msg, ok := cardRefusal(err)
		if !ok {
			h.failed(w, r, err)
			return
		}
		h.showCard(w, r, s, status, view{Error: msg})
		return
	}
	h.record(r, s, action, c.ID)
	http.Redirect(w, r, "/dashboard/cards/"+url.PathEscape(c.ID)+"?done="+done, http.StatusSeeOther)
}

// cardRefusal returns the status and the sentence of a freeze or unfreeze
// the service refused; ok is false for a failure.
func cardRefusal(err error) (status int, msg string, ok bool) {
	switch {
	case errors.Is(err, cards.ErrAlreadyFrozen):
		return http.StatusConflict, "This card is already frozen.", true
	case errors.Is(err, cards.ErrNotFrozen):
		return http.StatusConflict, "This card is not frozen, so there is nothing to unfreeze.", true
	case errors.Is(err, cards.ErrNotActive):
		return http.StatusConflict, "Only an active card can be frozen.", true
	case errors.Is(err, cards.ErrTerminated):
		return http.StatusConflict, "This card is terminated: it can no longer be frozen or unfrozen.", true
	case errors.Is(err, cards.ErrLocked):
		return http.StatusConflict, "This card is locked: it was frozen with a lock through the API, and only the API can unfreeze it (with unlock=true).", true
	case errors.Is(err, cards.ErrNoIssuer):
		return http.StatusServiceUnavailable, "Cards cannot be frozen or unfrozen here: no card issuer is configured.", true
	case errors.Is(err, cards.ErrIssuerUnavailable):
		return http.StatusBadGateway, "The card issuer could not be reached, so the card was left as it was. Please try again in a moment.", true
	case errors.Is(err, contention.ErrConflict):
		return http.StatusConflict, "The card was being changed by another request. Please try again.", true
	}
	return 0, "", false
}

// cardRowOf returns c, held by holder, as the pages show it.
func cardRowOf(c cards.Card, holder string) cardRow {
	number := "•••• " + c.Last4
	if c.Last4 == "" {
		number = "not issued yet"
	}
	return cardRow{
		ID: c.ID, Number: number, Holder: holder, HolderID: c.CustomerID, Brand: string(c.Brand), Status: string(c.Status),
		Balance: Amount(c.Balance, cards.Currency), Created: c.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"),
		Frozen: c.Status == cards.Frozen, Locked: c.IsLocked, Live: c.Status == cards.Active || c.Status == cards.Frozen,
	}
}

// cardTxRowOf returns t as a card's page lists it.
func cardTxRowOf(t cards.Transaction) cardTxRow {
	desc := t.Description
	if t.Merchant != nil {
		desc = t.Merchant.Text()
	}
	return cardTxRow{
		Date: t.CreatedAt.UTC().Format("2006-01-02 15:04 UTC"), Type: strings.ReplaceAll(string(t.Type), "_", " "),
		Status: string(t.Status), Description: desc, Amount: Amount(t.Amount, cards.Currency), Fee: Amount(t.Fee, cards.Currency),
	}
}

// expiry returns the card's expiry month, MM/YYYY, or "" before it is
// issued.
func expiry(c cards.Card) string {
	if c.ExpiryYear == 0 {
		return ""
	}
	return fmt.Sprintf("%02d/%d", c.ExpiryMonth, c.ExpiryYear)
}
