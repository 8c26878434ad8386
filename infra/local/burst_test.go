package local_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"payments/infra/local/localtest"
	"payments/pkg/payments"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/storetest"
	"payments/pkg/waittest"
	"payments/pkg/wallets"
)

// TestBurstLeavesNoPaymentUnsent sends 300 payouts and collections in a
// burst through the local stack (the dev server with its pollers and
// schedules, as make run serves it) with a 20 s payment deadline, and waits
// until each payment is final or flagged for reconciliation. None may be
// left unsent: a payment the worker never submitted is sent before its
// deadline or failed after it, refunded, with payments.NotSentMessage; only
// one the operator may have (payments.Submitting) may wait for
// reconciliation. The sandbox operator pays these numbers, so every other
// failure is a fault too. The ledger invariant holds at the end.
func TestBurstLeavesNoPaymentUnsent(t *testing.T) {
	base, res := localtest.ServeStack(t, slog.New(slog.DiscardHandler), map[string]string{"PaymentDeadlineSeconds": "20"})
	api := &httpClient{t: t, base: base + "/api/v1"}
	companyID, auth, _ := payingCompany(t, api, "Burst Ltd", "", 1_000_000)

	const burst, clients = 300, 32
	ids := make([]string, burst)
	var wg sync.WaitGroup
	work := make(chan int)
	for range clients {
		wg.Go(func() {
			for i := range work {
				route := "/payment/payout"
				if i%2 == 1 {
					route = "/payment/collect"
				}
				var accepted struct {
					Data struct {
						TransactionID string `json:"transaction_id"`
					} `json:"data"`
				}
				api.do("POST", route, auth, map[string]any{
					"operator": "mtn", "country": "CM", "phone_number": "237670000001", "amount": 100, "currency": "XAF",
					"external_id": fmt.Sprintf("burst-%d", i),
				}, http.StatusOK, &accepted)
				ids[i] = accepted.Data.TransactionID
			}
		})
	}
	for i := range burst {
		work <- i
	}
	close(work)
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	db := store.New(storetest.Client(t), res.TableName)
	st := moneystore.NewPayments(db)
	ctx := context.Background()
	settled := func(p payments.Payment) bool {
		return p.Status.Terminal() || (p.ReconciliationRequired && p.Submission == payments.Submitting)
	}
	final := map[string]payments.Payment{}
	waittest.Until(t, 4*time.Minute, "every payment final or justly flagged", func() bool {
		for _, id := range ids {
			if settled(final[id]) {
				continue
			}
			p, err := st.GetPayment(ctx, companyID, id)
			if err != nil {
				t.Fatal(err)
			}
			final[id] = p
		}
		for _, p := range final {
			if !settled(p) {
				return false
			}
		}
		return true
	})
	counts := map[string]int{}
	for _, p := range final {
		switch {
		case p.Status == payments.StatusFailed && p.ErrorMessage != payments.NotSentMessage:
			t.Errorf("%s %s failed: %q", p.Type, p.ID, p.ErrorMessage)
		case p.Status == payments.StatusFailed && p.Submission != payments.NotSubmitted:
			t.Errorf("%s %s failed as unsent, but it was submitted", p.Type, p.ID)
		}
		counts[fmt.Sprintf("%s %s flagged=%v", p.Type, p.Status, p.ReconciliationRequired)]++
	}
	t.Logf("%d payments: %v", len(final), counts)
	if err := wallets.VerifyLedger(ctx, moneystore.NewWallets(db), companyID); err != nil {
		t.Fatal(err)
	}
}

// httpClient calls the API of a served stack.
type httpClient struct {
	t    testing.TB
	base string
}

// do sends body (JSON, none when nil) to path with header and decodes the
// answer into out (when not nil); an answer other than want fails the test.
// It may be called from several goroutines.
func (c *httpClient) do(method, path string, header map[string]string, body any, want int, out any) {
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			c.t.Error(err)
			return
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, c.base+path, r)
	if err != nil {
		c.t.Error(err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		c.t.Error(err)
		return
	}
	defer res.Body.Close()
	got, _ := io.ReadAll(res.Body)
	if res.StatusCode != want {
		c.t.Errorf("%s %s: %d %s, want %d", method, path, res.StatusCode, got, want)
		return
	}
	if out != nil {
		if err := json.Unmarshal(got, out); err != nil {
			c.t.Errorf("%s %s: %v", method, path, err)
		}
	}
}

// payingCompany makes, through the API of api, an approved company named
// name (with webhookURL as its webhook URL, when not "") and its XAF wallet
// in Cameroon, credited with amount on its payout balance by the console;
// it returns the company's id, its token's Authorization header and the
// wallet's id, and stops the test when a step failed.
func payingCompany(t *testing.T, api *httpClient, name, webhookURL string, amount int) (companyID string, auth map[string]string, walletID string) {
	t.Helper()
	admin := map[string]string{"X-Admin-Key": localtest.AdminAPIKey}
	var company struct {
		Data struct {
			ID        string `json:"id"`
			ClientID  string `json:"client_id"`
			ClientKey string `json:"client_key"`
		} `json:"data"`
	}
	api.do("POST", "/admin/companies", admin, map[string]string{"name": name}, http.StatusCreated, &company)
	if t.Failed() {
		t.FailNow()
	}
	c := company.Data
	patch := map[string]string{"kyb_status": "APPROVED"}
	if webhookURL != "" {
		patch["webhook_url"] = webhookURL
	}
	api.do("PATCH", "/admin/companies/"+c.ID, admin, patch, http.StatusOK, nil)
	var token struct {
		AccessToken string `json:"access_token"`
	}
	api.do("POST", "/auth/token", nil, map[string]string{"client_id": c.ClientID, "client_key": c.ClientKey}, http.StatusOK, &token)
	auth = map[string]string{"Authorization": "Bearer " + token.AccessToken}
	var wallet struct {
		Data struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	api.do("POST", "/wallets", auth, map[string]string{"currency": "XAF", "country": "Cameroon", "country_iso_code": "CM", "country_phone_code": "+237"},
		http.StatusCreated, &wallet)
	api.do("POST", "/admin/wallets/"+wallet.Data.ID+"/credit", admin, map[string]any{"balance": "payout", "amount": amount, "reference": name + " funding"},
		http.StatusOK, nil)
	if t.Failed() {
		t.FailNow()
	}
	return c.ID, auth, wallet.Data.ID
}
