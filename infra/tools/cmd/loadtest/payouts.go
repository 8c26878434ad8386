package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"payments/infra/local/samtemplate"
	"payments/pkg/contention"
	"payments/pkg/events"
	"payments/pkg/fees"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/payments"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/timestamp"
	"payments/pkg/wallets"
)

// payouts runs scenarios (a) and (b) on 1 and on o.wallets wallets and
// prints their tables; it returns their results, (a) and (b) on 1 wallet
// first, and the 1 wallet's deployment, still running, for the conflict
// scenarios (the other is stopped).
func payouts(ctx context.Context, tpl *samtemplate.Template, ep endpoints, o options, out io.Writer) ([]Result, *deployment, error) {
	var results []Result
	var hot *deployment
	for _, n := range []int{1, o.wallets} {
		d, err := deploy(ctx, tpl, ep)
		if err != nil {
			if hot != nil {
				hot.stop()
			}
			return nil, nil, err
		}
		ws, err := d.setUp(ctx, n)
		if err != nil {
			d.stop()
			if hot != nil {
				hot.stop()
			}
			return nil, nil, err
		}
		label := fmt.Sprintf("%d wallets", n)
		if n == 1 {
			label, hot = "1 wallet", d
		}
		// (a) and (b) take turns, so that what else the machine runs, and
		// the table's growth, weigh on both alike.
		a := Result{Name: "(a) dev server, " + label}
		b := Result{Name: "(b) CreatePayout direct, " + label}
		slice := o.duration / time.Duration(o.rounds)
		db := d.db()
		for i := range o.rounds {
			fmt.Fprintf(os.Stderr, "loadtest: %s, round %d of %d: (a) dev server, then (b) CreatePayout, %s each…\n", label, i+1, o.rounds, slice)
			a.Add(d.viaServer(ctx, ws, o.clients, slice))
			b.Add(direct(ctx, db, ws, o.clients, slice))
		}
		results = append(results, a, b)
		if d != hot {
			d.stop()
		}
	}

	fmt.Fprintln(out)
	writeTable(out, results)
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| wallets | ratio (a)/(b) |")
	fmt.Fprintln(out, "|---:|---:|")
	for i := 0; i+1 < len(results); i += 2 {
		n := 1
		if i > 0 {
			n = o.wallets
		}
		fmt.Fprintf(out, "| %d | %.2f |\n", n, Ratio(results[i], results[i+1]))
	}
	fmt.Fprintf(out, "\nTarget (a)/(b) >= %.2f on %d wallets: %s.\n", Target, o.wallets, verdict(Ratio(results[2], results[3]) >= Target))
	return results, hot, nil
}

// viaServer is scenario (a): payouts through the dev server.
func (d *deployment) viaServer(ctx context.Context, ws []wallet, clients int, dur time.Duration) Result {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, MaxConnsPerHost: clients}}
	defer client.CloseIdleConnections()
	body := []byte(fmt.Sprintf(`{"operator":%q,"country":%q,"phone_number":%q,"amount":%d,"currency":%q}`,
		payoutOperator, payoutCountry, payoutPhone, payoutAmount, payoutCurrency))
	url := d.base + "/payment/payout"
	return load(ctx, ws, clients, dur, func(ctx context.Context, w wallet) string {
		req, err := http.NewRequestWithContext(ctx, "POST", url, bytes.NewReader(body))
		if err != nil {
			return "error: " + err.Error()
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+w.token)
		resp, err := client.Do(req)
		if err != nil {
			return "error: " + shorten(err.Error())
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		if resp.StatusCode == http.StatusOK {
			return ""
		}
		var e struct {
			Code string `json:"code"`
		}
		json.Unmarshal(raw, &e)
		return strings.TrimSpace(fmt.Sprintf("%d %s", resp.StatusCode, e.Code))
	})
}

// direct is scenario (b): moneystore.Payments.CreatePayout on db, with the
// payment, reservation and event that payments.Service.Payout would make
// for the same request.
func direct(ctx context.Context, db *store.DB, ws []wallet, clients int, d time.Duration) Result {
	ps := moneystore.NewPayments(db)
	rule, err := fees.DefaultSchedule().Match(fees.TypePayout, payoutOperator, payoutCountry, payoutCurrency)
	if err != nil {
		return Result{Refused: map[string]int{"error: " + err.Error(): 1}}
	}
	amount, err := money.ParseAmount(json.RawMessage(strconv.Itoa(payoutAmount)), payoutCurrency)
	if err != nil {
		return Result{Refused: map[string]int{"error: " + err.Error(): 1}}
	}
	fee := rule.Fee(amount)
	return load(ctx, ws, clients, d, func(ctx context.Context, w wallet) string {
		p, reservation, ev, err := newPayout(w, amount, fee)
		if err != nil {
			return "error: " + err.Error()
		}
		switch err := ps.CreatePayout(ctx, p, reservation, ev); {
		case err == nil:
			return ""
		case errors.Is(err, contention.ErrConflict):
			return "conflict"
		case errors.Is(err, wallets.ErrInsufficientBalance):
			return "insufficient balance"
		default:
			return "error: " + shorten(err.Error())
		}
	})
}

// newPayout returns what payments.Service.Payout hands to CreatePayout for
// a payout of amount + fee from w.
func newPayout(w wallet, amount, fee int64) (payments.Payment, wallets.Transaction, events.Event, error) {
	now := time.Now().UTC()
	p := payments.Payment{
		ID: ids.NewV7(now), CompanyID: w.company, Type: payments.TypePayout, Status: payments.StatusPending,
		Amount: amount, Fee: fee, Currency: payoutCurrency, Country: payoutCountry, Operator: payoutOperator,
		PhoneNumber: payoutPhone, Reason: "Mobile money payout", WalletID: w.id,
		NextPollAt: now, CreatedAt: now, UpdatedAt: now,
	}
	p.ExternalID = p.ID
	p.EntryID = ids.NewV7(now)
	reservation := wallets.Transaction{
		ID: p.EntryID, CompanyID: w.company, WalletID: w.id, Amount: amount, AmountWithFee: p.Total(),
		FeeAmount: fee, NetAmount: amount, Currency: payoutCurrency, Status: wallets.StatusPending,
		Type: wallets.TypeWithdraw, Operator: payoutOperator, PhoneNumber: payoutPhone, Reference: p.ExternalID,
		Balance: wallets.Payout, Reserved: p.Total(), PaymentID: p.ID, CreatedAt: now,
	}
	ev, err := events.NewPaymentStatusUpdated(w.company, events.PayoutStatusUpdated, events.PaymentStatusData{
		TransactionID: p.ID, ExternalID: p.ExternalID, Type: string(p.Type), Status: string(p.Status),
		Amount: money.JSON(amount, payoutCurrency), FeeAmount: money.JSON(fee, payoutCurrency),
		Currency: payoutCurrency, Country: payoutCountry, Operator: payoutOperator, PhoneNumber: payoutPhone,
		UpdatedAt: timestamp.Format(now),
	}, "", now)
	return p, reservation, ev, err
}
