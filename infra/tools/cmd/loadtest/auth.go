package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"payments/infra/local/samples"
	"payments/infra/local/samtemplate"
	"payments/pkg/cards"
	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/issuerhooks"
	"payments/pkg/money"
	"payments/pkg/providers/issuer"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/timestamp"
)

// The authorization every client asks for: a purchase of 1.00 USD in
// Austin, on a card holding cardFunding, enough for every approval of the
// run (a card that ran out would decline, and a decline is another write).
const (
	authAmount  = 100 // USD cents
	cardFunding = 50_000
	merchant    = "Load Test Coffee"
	merchantAt  = "Austin"
)

// AuthP99Target is the p99 latency of an authorization's decision through
// the dev server that the service aims for locally (docs/performance.md);
// the least ratio (c)/(d) on many cards is Target.
const AuthP99Target = 250 * time.Millisecond

// authorizations runs the card authorization scenarios on 1 card and on
// o.cards cards, each on a fresh deployment, and prints their table, the
// ratios (c)/(d) and the targets.
func authorizations(ctx context.Context, tpl *samtemplate.Template, ep endpoints, o options, out io.Writer) error {
	var results []Result
	for _, n := range []int{1, o.cards} {
		d, err := deploy(ctx, tpl, ep)
		if err != nil {
			return err
		}
		c, d2, err := d.authScenarios(ctx, n, o)
		d.stop()
		if err != nil {
			return err
		}
		results = append(results, c, d2)
	}
	fmt.Fprintf(out, "\nCard authorizations: %d clients, %s per scenario, %d rounds:\n\n", o.authClients, o.authDuration, o.rounds)
	writeTable(out, results)
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| cards | ratio (c)/(d) |")
	fmt.Fprintln(out, "|---:|---:|")
	fmt.Fprintf(out, "| 1 | %.2f |\n", Ratio(results[0], results[1]))
	fmt.Fprintf(out, "| %d | %.2f |\n", o.cards, Ratio(results[2], results[3]))
	fmt.Fprintln(out)
	fmt.Fprintf(out, "Target (c)/(d) >= %.2f on %d cards: %s.\n", Target, o.cards, verdict(Ratio(results[2], results[3]) >= Target))
	for _, r := range []Result{results[0], results[2]} {
		p99 := r.Percentile(99)
		fmt.Fprintf(out, "Target p99 <= %s for %s: %s (%s).\n", ms(AuthP99Target), r.Name, verdict(r.Accepted > 0 && p99 <= AuthP99Target), ms(p99))
	}
	return nil
}

// verdict is "met" or "NOT met".
func verdict(met bool) string {
	if met {
		return "met"
	}
	return "NOT met"
}

// authScenarios makes n cards on d and runs (c) and (d) on them, taking
// turns for o.rounds rounds.
func (d *deployment) authScenarios(ctx context.Context, n int, o options) (Result, Result, error) {
	cs, err := d.setUpCards(ctx, n)
	if err != nil {
		return Result{}, Result{}, err
	}
	label := fmt.Sprintf("%d cards", n)
	if n == 1 {
		label = "1 card"
	}
	c := Result{Name: "(c) dev server, " + label}
	r := Result{Name: "(d) Cards.Record direct, " + label}
	slice := o.authDuration / time.Duration(o.rounds)
	db := d.db()
	for i := range o.rounds {
		fmt.Fprintf(os.Stderr, "loadtest: authorizations, %s, round %d of %d: (c) dev server, then (d) Cards.Record, %s each…\n", label, i+1, o.rounds, slice)
		c.Add(d.authViaServer(ctx, cs, o.authClients, slice))
		r.Add(authDirect(ctx, db, cs, o.authClients, slice))
	}
	return c, r, nil
}

// setUpCards returns n ACTIVE cards, as read once after their issuance:
// it makes n companies through the API, each with a USD wallet, a
// customer enrolled with the sample documents (the sandbox KYC verifies
// it and the sandbox issuer registers it) and a card issued with
// cardFunding USD on it, as the README's walk-through does; then it reads
// each card from the table, for the issuer's card id and for (d).
func (d *deployment) setUpCards(ctx context.Context, n int) ([]cards.Card, error) {
	db := moneystore.NewCards(d.db())
	cs := make([]cards.Card, n)
	for i := range cs {
		companyID, token, err := d.company(ctx, fmt.Sprintf("Card load %d", i))
		if err != nil {
			return nil, err
		}
		var w struct {
			ID string `json:"id"`
		}
		if err := d.call(ctx, "POST", "/wallets", bearer(token), map[string]string{
			"currency": "USD", "country": "United States", "country_iso_code": "US", "country_phone_code": "+1",
		}, http.StatusCreated, &w); err != nil {
			return nil, err
		}
		if err := d.credit(ctx, w.ID, cardFunding+1); err != nil { // the issuance fee is 1 USD
			return nil, err
		}
		customerID, err := d.customer(ctx, token, i)
		if err != nil {
			return nil, err
		}
		var issued struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if err := d.call(ctx, "POST", "/cards", bearer(token), map[string]any{"customer_id": customerID, "amount": cardFunding},
			http.StatusCreated, &issued); err != nil {
			return nil, err
		}
		c, err := db.Card(ctx, companyID, issued.ID)
		if err != nil {
			return nil, fmt.Errorf("set-up: read card %s: %w", issued.ID, err)
		}
		if c.Status != cards.Active || c.IssuerCardID == "" {
			return nil, fmt.Errorf("set-up: card %s is %s, issuer card %q: want ACTIVE and issued", c.ID, c.Status, c.IssuerCardID)
		}
		cs[i] = c
	}
	return cs, nil
}

// customer enrols customer i of the company of token with POST /customers
// (multipart, the sample documents) and returns its id.
func (d *deployment) customer(ctx context.Context, token string, i int) (string, error) {
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	for k, v := range map[string]string{
		"first_name": "Amina", "last_name": "Njoya", "email": fmt.Sprintf("load%d@example.com", i), "country": "Cameroon",
		"street": "12 Rue de la Joie", "city": "Douala", "state": "Littoral", "postal_code": "00237",
		"country_iso_code": "CM", "country_phone_code": "+237", "phone_number": "670000001",
		// Not ending in 000, 777 or 999: verified, registered, active.
		"identification_number": fmt.Sprintf("CM-LOAD-%d1", i), "id_document_type": "NIN", "date_of_birth": "1990-04-12",
	} {
		if err := mw.WriteField(k, v); err != nil {
			return "", err
		}
	}
	for name, b := range map[string][]byte{"id_document_front": samples.PNG(), "id_document_back": samples.PDF()} {
		fw, err := mw.CreateFormFile(name, name)
		if err != nil {
			return "", err
		}
		if _, err := fw.Write(b); err != nil {
			return "", err
		}
	}
	if err := mw.Close(); err != nil {
		return "", err
	}
	var c struct {
		ID        string `json:"id"`
		KYCStatus string `json:"kyc_status"`
	}
	if err := d.send(ctx, "POST", "/customers", bearer(token), mw.FormDataContentType(), body.Bytes(), http.StatusCreated, &c); err != nil {
		return "", err
	}
	if c.KYCStatus != "VERIFIED" {
		return "", fmt.Errorf("set-up: customer %s is %s, want VERIFIED", c.ID, c.KYCStatus)
	}
	return c.ID, nil
}

// authRequest returns the body of a new authorization request of
// authAmount on c, with an id of its own.
func authRequest(c cards.Card) ([]byte, error) {
	return json.Marshal(issuer.AuthorizationRequest{
		ID: "ntx_" + uuid.NewString(), CardID: c.IssuerCardID, Reference: c.ID, Kind: issuer.KindAuthorization,
		Amount: authAmount, Currency: cards.Currency, Merchant: issuer.Merchant{Name: merchant, City: merchantAt, Country: "US"},
		CreatedAt: time.Now().UTC(),
	})
}

// authViaServer is scenario (c): authorization requests, signed as the
// issuer signs them, through the dev server.
func (d *deployment) authViaServer(ctx context.Context, cs []cards.Card, clients int, dur time.Duration) Result {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	url := d.base + "/issuer/authorizations"
	return load(ctx, cs, clients, dur, func(ctx context.Context, c cards.Card) string {
		body, err := authRequest(c)
		if err != nil {
			return "error: " + err.Error()
		}
		req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
		if err != nil {
			return "error: " + err.Error()
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(issuerhooks.Header, issuerhooks.Sign([]byte(issuerSecret), body, time.Now()))
		resp, err := client.Do(req)
		if err != nil {
			return "error: " + shorten(err.Error())
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return authOutcome(resp.StatusCode, raw)
	})
}

// authOutcome returns "" for an answer that approves, else the kind of
// the answer: "DECLINED <reason>", or the status and error code.
func authOutcome(status int, raw []byte) string {
	var a struct {
		Code string                      `json:"code"`
		Data *issuer.AuthorizationAnswer `json:"data"`
	}
	json.Unmarshal(raw, &a)
	switch {
	case status == http.StatusOK && a.Data != nil && a.Data.Decision == issuer.Approved:
		return ""
	case status == http.StatusOK && a.Data != nil && a.Data.DeclineReason != nil:
		return a.Data.Decision + " " + *a.Data.DeclineReason
	case status == http.StatusOK && a.Data != nil:
		return a.Data.Decision
	}
	return strings.TrimSpace(fmt.Sprintf("%d %s", status, a.Code))
}

// authDirect is scenario (d): moneystore.Cards.Record of the approval that
// cards.Service.Decide writes for the same request, on the card as read
// once, against db.
func authDirect(ctx context.Context, db *store.DB, cs []cards.Card, clients int, d time.Duration) Result {
	st := moneystore.NewCards(db)
	return load(ctx, cs, clients, d, func(ctx context.Context, c cards.Card) string {
		rec, err := approval(c, "ntx_"+uuid.NewString(), time.Now())
		if err != nil {
			return "error: " + err.Error()
		}
		switch err := st.Record(ctx, rec); {
		case err == nil:
			return ""
		case errors.Is(err, cards.ErrCardRefused):
			return "card refused"
		default:
			return "error: " + shorten(err.Error())
		}
	})
}

// approval returns the Record that cards.Service's approve writes for
// authorization id of authAmount on c at now: the claim of id, a hold of
// the amount on the card (on the condition that it is ACTIVE, not locked
// and has it available), the AUTHORIZATION transaction with its ISSUERTX
// reference, and transaction.authorization.created in the outbox.
func approval(c cards.Card, id string, now time.Time) (cards.Record, error) {
	now = timestamp.Of(now)
	tx := cards.Transaction{
		ID: ids.NewV7(now), CompanyID: c.CompanyID, CardID: c.ID, CustomerID: c.CustomerID,
		Type: cards.TxAuthorization, Kind: cards.KindAuthorization, Status: cards.TxPending,
		Amount: authAmount, Hold: authAmount, IssuerTxID: id, CreatedAt: now,
		Merchant:    &cards.Merchant{Name: merchant, City: merchantAt, Country: "US"},
		Description: merchant + ", " + merchantAt,
	}
	ev, err := events.Build(c.CompanyID, events.TransactionAuthorizationCreatedData{CardTransaction: events.CardTransaction{
		TransactionID: tx.ID, CardID: tx.CardID, CustomerID: tx.CustomerID, Type: string(tx.Type),
		Status: string(tx.Status), Amount: money.JSON(tx.Amount, cards.Currency), Currency: cards.Currency,
		Description: tx.Description, CreatedAt: timestamp.Format(tx.CreatedAt),
	}}, now)
	if err != nil {
		return cards.Record{}, err
	}
	return cards.Record{
		EventID: id, Card: c, Approve: true, HeldDelta: authAmount, Now: now,
		Txs: []cards.Transaction{tx}, Events: []events.Event{ev},
	}, nil
}
