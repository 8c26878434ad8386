// Package cardshttp is the HTTP layer of pkg/cards: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package cardshttp

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"payments/pkg/cards"
	"payments/pkg/field"
	"payments/pkg/httpapi"
)

// RevealsPageSize is the default page size of GET /cards/{id}/reveals.
const RevealsPageSize = 20

// Revealing reports whether r, a request to GET /cards/{id}, asks for the
// card's number and CVV (?reveal=true): those requests, and every request
// to POST /cards/{id}/reveal-sessions, are registered as reveals
// (httpapi.Reveal), which the company's limits count apart. A malformed
// reveal is refused by the route: it reveals nothing.
func Revealing(r *http.Request) bool {
	reveal, err := httpapi.ParseBool(r, revealParam, false)
	return err == nil && reveal
}

// revealParam is the query parameter of GET /cards/{id} that asks for the
// card's number and CVV.
const revealParam = "reveal"

// Routes registers the cards function's routes.
func Routes(rt *httpapi.Router, svc *cards.Service) {
	h := handlers{svc}
	rt.Handle("POST /cards", h.issue, httpapi.Money())
	rt.Handle("GET /cards", h.list)
	rt.Handle("GET /cards/{id}", h.get, httpapi.Reveal(Revealing))
	rt.Handle("GET /cards/{id}/reveals", h.reveals)
	rt.Handle("POST /cards/{id}/reveal-sessions", h.revealSession, httpapi.Reveal(nil))
	rt.Handle("GET /cards/{id}/transactions", h.transactions)
	rt.Handle("GET /cards/{id}/transactions/{transactionId}", h.transaction)
	rt.Handle("POST /cards/{id}/fund", h.fund, httpapi.Money())
	rt.Handle("POST /cards/{id}/withdraw", h.withdraw, httpapi.Money())
	rt.Handle("PUT /cards/{id}/freeze", h.freeze)
	rt.Handle("PUT /cards/{id}/unfreeze", h.unfreeze)
	rt.Handle("POST /cards/{id}/terminate", h.terminate, httpapi.Money())
	rt.Handle("GET /customers/{id}/cards", h.customerCards)
	rt.Handle("GET /customers/{id}/transactions", h.customerTransactions)
	disputeRoutes(rt, h)
}

type handlers struct{ svc *cards.Service }

func (h handlers) issue(w http.ResponseWriter, r *http.Request) error {
	var in cards.IssueInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	c, err := h.svc.Issue(r.Context(), cid, in)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusCreated, "Card created successfully", NewResponse(c))
	return nil
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	q, err := cards.ParseListQuery(v.Get("status"), v.Get("brand"), v.Get("last4"))
	if err != nil {
		return err
	}
	if q.Sync, err = httpapi.ParseBool(r, "sync", false); err != nil {
		return err
	}
	companyID, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	cs, st, err := h.svc.List(r.Context(), companyID, q)
	if err != nil {
		return err
	}
	out := listResponse{CompanyID: companyID, Statistics: newStatisticsResponse(st), Cards: make([]Response, len(cs))}
	for i, c := range cs {
		out.Cards[i] = NewResponse(c)
	}
	httpapi.Respond(w, http.StatusOK, fmt.Sprintf("%d items retrieved successfully", len(cs)), out)
	return nil
}

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	var o cards.ReadOptions
	var err error
	if o.Reveal, err = httpapi.ParseBool(r, revealParam, false); err != nil {
		return err
	}
	if o.IncludeRaw, err = httpapi.ParseBool(r, "includeRaw", false); err != nil {
		return err
	}
	if o.Sync, err = httpapi.ParseBool(r, "sync", true); err != nil {
		return err
	}
	o.Audit = cards.Reveal{SourceIP: httpapi.SourceIP(r), UserAgent: r.UserAgent(), RequestID: httpapi.RequestID(r)}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	read, err := h.svc.Get(r.Context(), cid, r.PathValue("id"), o)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Card retrieved successfully", newReadResponse(read))
	return nil
}

// revealSessionInput is the body of POST /cards/{id}/reveal-sessions.
type revealSessionInput struct {
	Nonce string `json:"nonce"`
}

func (h handlers) revealSession(w http.ResponseWriter, r *http.Request) error {
	var in revealSessionInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	audit := cards.Reveal{SourceIP: httpapi.SourceIP(r), UserAgent: r.UserAgent(), RequestID: httpapi.RequestID(r)}
	rs, err := h.svc.CreateRevealSession(r.Context(), cid, r.PathValue("id"), in.Nonce, audit)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusCreated, "cards.Reveal session created", newRevealSessionResponse(rs))
	return nil
}

func (h handlers) reveals(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r, RevealsPageSize)
	if err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	res, err := h.svc.Reveals(r.Context(), cid, r.PathValue("id"), page)
	if err != nil {
		return err
	}
	out := make([]revealResponse, len(res.Items))
	for i, rv := range res.Items {
		out[i] = newRevealResponse(rv)
	}
	httpapi.RespondList(w, out, httpapi.Pagination(r, page, res.Total, res.Next))
	return nil
}

func (h handlers) fund(w http.ResponseWriter, r *http.Request) error {
	return h.move(w, r, h.svc.Fund, "Card funded successfully")
}

func (h handlers) withdraw(w http.ResponseWriter, r *http.Request) error {
	return h.move(w, r, h.svc.Withdraw, "Card withdrawal successful")
}

func (h handlers) move(w http.ResponseWriter, r *http.Request, do func(ctx context.Context, companyID, cardID string, in cards.AmountInput) (cards.MoveResult, error), message string) error {
	var in cards.AmountInput
	if err := httpapi.Decode(r, &in); err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	res, err := do(r.Context(), cid, r.PathValue("id"), in)
	if err != nil && res.Tx.ID != "" {
		// Committed, not finished: the answer says what (PROCESSING).
		return httpapi.WithData(err, newMoveResponse(res))
	}
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, message, newMoveResponse(res))
	return nil
}

func (h handlers) freeze(w http.ResponseWriter, r *http.Request) error {
	lock, err := httpapi.ParseBool(r, "lock", false)
	if err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	c, err := h.svc.Freeze(r.Context(), cid, r.PathValue("id"), lock)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Card frozen successfully", statusResponse{CardID: c.ID, CardStatus: string(c.Status), IsLocked: c.IsLocked})
	return nil
}

func (h handlers) unfreeze(w http.ResponseWriter, r *http.Request) error {
	unlock, err := httpapi.ParseBool(r, "unlock", false)
	if err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	c, err := h.svc.Unfreeze(r.Context(), cid, r.PathValue("id"), unlock)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Card unfrozen successfully", statusResponse{CardID: c.ID, CardStatus: string(c.Status), IsLocked: c.IsLocked})
	return nil
}

func (h handlers) terminate(w http.ResponseWriter, r *http.Request) error {
	var in cards.TerminateInput
	if err := httpapi.DecodeOptional(r, &in); err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	c, tx, err := h.svc.Terminate(r.Context(), cid, r.PathValue("id"), in)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Card terminated successfully", terminateResponse{
		CardID: c.ID, CardStatus: string(c.Status), RefundAmount: moneyJSON(-tx.CardDelta),
		RefundProcessed: c.Held == 0, HeldAmount: moneyJSON(c.Held), TransactionID: tx.ID,
	})
	return nil
}

func (h handlers) customerCards(w http.ResponseWriter, r *http.Request) error {
	sync, err := httpapi.ParseBool(r, "sync", false)
	if err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	cs, err := h.svc.CustomerCards(r.Context(), cid, r.PathValue("id"), sync)
	if err != nil {
		return err
	}
	out := make([]customerCardResponse, len(cs))
	for i, c := range cs {
		out[i] = customerCardResponse{Response: NewResponse(c), MaskedNumber: c.MaskedPAN()}
	}
	httpapi.Respond(w, http.StatusOK, fmt.Sprintf("%d items retrieved successfully", len(cs)), out)
	return nil
}

func (h handlers) transactions(w http.ResponseWriter, r *http.Request) error {
	q, err := ParseTxQuery(r, true, cards.TransactionsPageSize)
	if err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	res, err := h.svc.ListTransactions(r.Context(), cid, r.PathValue("id"), q)
	if err != nil {
		return err
	}
	httpapi.RespondList(w, txResponses(res.Items, q.IncludeRaw), httpapi.Pagination(r, q.Page, res.Total, res.Next))
	return nil
}

func (h handlers) transaction(w http.ResponseWriter, r *http.Request) error {
	includeRaw, err := httpapi.ParseBool(r, "includeRaw", false)
	if err != nil {
		return err
	}
	if _, err := httpapi.ParseBool(r, "sync", true); err != nil { // accepted, changes nothing
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	tx, err := h.svc.GetTransaction(r.Context(), cid, r.PathValue("id"), r.PathValue("transactionId"))
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Card transaction retrieved successfully", NewTxResponse(tx, includeRaw))
	return nil
}

func (h handlers) customerTransactions(w http.ResponseWriter, r *http.Request) error {
	q, err := ParseTxQuery(r, false, cards.CustomerTransactionsPageSize)
	if err != nil {
		return err
	}
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	res, err := h.svc.CustomerTransactions(r.Context(), cid, r.PathValue("id"), q)
	if err != nil {
		return err
	}
	httpapi.RespondList(w, txResponses(res.Items, q.IncludeRaw), httpapi.Pagination(r, q.Page, res.Total, res.Next))
	return nil
}

// badFilter is the spec's message for a list filter it does not know.
const badFilter = "invalid status, brand, type or date value"

// ParseTxQuery reads the query of a transaction list: page, limit and
// cursor (pages numbered from 0 when zeroBased, as on a card's list, spec
// §4.19, else from 1; limit 1 to 100, default defaultLimit), fromDate and
// toDate (dates or RFC 3339 date-times, from inclusive, to exclusive),
// type and status (any case), includeRaw (default false) and sync (default
// true). Each bad value is a 400 naming its parameter.
func ParseTxQuery(r *http.Request, zeroBased bool, defaultLimit int) (cards.TxQuery, error) {
	var q cards.TxQuery
	var err error
	if zeroBased {
		q.Page, err = httpapi.ParseZeroBasedPage(r, defaultLimit)
	} else {
		q.Page, err = httpapi.ParsePage(r, defaultLimit)
	}
	if err != nil {
		return q, err
	}
	if q.From, q.To, err = httpapi.ParseDates(r, "fromDate", "toDate"); err != nil {
		return q, err
	}
	v := r.URL.Query()
	if s := v.Get("type"); s != "" {
		q.Type = cards.TxType(strings.ToUpper(s))
		if !slices.Contains(cards.TxTypes, q.Type) {
			return q, field.Invalid("type", badFilter)
		}
	}
	if s := v.Get("status"); s != "" {
		q.Status = cards.TxStatus(strings.ToUpper(s))
		if !slices.Contains(cards.TxStatuses, q.Status) {
			return q, field.Invalid("status", badFilter)
		}
	}
	if q.IncludeRaw, err = httpapi.ParseBool(r, "includeRaw", false); err != nil {
		return q, err
	}
	if q.Sync, err = httpapi.ParseBool(r, "sync", true); err != nil {
		return q, err
	}
	return q, nil
}
