package local_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"payments/infra/local/devserver"
	"payments/infra/local/localtest"
	"payments/pkg/app/apptest"
	"payments/pkg/correlation"
	"payments/pkg/function"
	"payments/pkg/metrics"
	"payments/pkg/waittest"
)

// TestPayoutLifeIsMeasuredAndCorrelated follows one payout through the
// local stack, as make run serves it, in each mode: accepted by the
// payments function, submitted and settled by the payout worker (by its
// poll of the sandbox operator; by simulated pawaPay's signed callback in
// production mode), its webhook delivered by the webhook worker to an HTTPS
// receiver. Every EMF line the functions wrote must be valid EMF; the
// payout's own lines (those carrying the id API Gateway gave the request
// that accepted it, as every line of the work that followed does, across
// the queue hops and the operator's callback) count it accepted and
// settled and its webhook delivered, with the delivery's delay; and the
// log lines of its acceptance, its settlement and its webhook attempts
// carry that id too, so that one grep finds the payout's whole life.
func TestPayoutLifeIsMeasuredAndCorrelated(t *testing.T) {
	var logs apptest.LogLines
	previous := slog.Default()
	slog.SetDefault(slog.New(correlation.LogHandler(slog.NewJSONHandler(&logs, nil))))
	t.Cleanup(func() { slog.SetDefault(previous) })
	for _, mode := range []string{"sandbox", "production"} {
		t.Run(mode, func(t *testing.T) {
			tpl := localtest.Template(t)
			res := localtest.Resources(t, tpl)
			res.Params["Mode"], res.Params["AdminCreditInProduction"] = mode, "true"
			var emf apptest.LogLines
			base, stop := localtest.StartServer(t, tpl, res, slog.New(slog.DiscardHandler), func(srv *devserver.Server) { srv.Metrics = &emf })
			t.Cleanup(stop)
			followPayout(t, base, &emf, &logs)
		})
	}
}

// followPayout makes a company with a webhook receiver and a funded XAF
// wallet on the stack at base, pays out from it, and checks the metrics
// written to emf and the logs written to logs.
func followPayout(t *testing.T, base string, emf, logs *apptest.LogLines) {
	var delivered sync.Map
	receiver := localtest.NewTLSServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		delivered.Store(string(body), true)
	}))
	api := &httpClient{t: t, base: base + "/api/v1"}
	_, auth, _ := payingCompany(t, api, "Metrics Ltd", receiver+"/hooks", 100000)

	body := `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":5000,"currency":"XAF"}`
	req, _ := http.NewRequest("POST", base+"/api/v1/payment/payout", strings.NewReader(body))
	req.Header.Set("Authorization", auth["Authorization"])
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var accepted struct {
		Data struct {
			TransactionID string `json:"transaction_id"`
		} `json:"data"`
	}
	json.NewDecoder(resp.Body).Decode(&accepted)
	resp.Body.Close()
	requestID := resp.Header.Get(devserver.RequestIDHeader)
	tx := accepted.Data.TransactionID
	if resp.StatusCode != http.StatusOK || requestID == "" || tx == "" {
		t.Fatalf("payout: %d, request id %q, transaction %q", resp.StatusCode, requestID, tx)
	}

	waittest.Until(t, time.Minute, "the payout's SUCCESS delivered to the receiver", func() bool {
		found := false
		delivered.Range(func(k, _ any) bool {
			b := k.(string)
			found = strings.Contains(b, tx) && strings.Contains(b, `"SUCCESS"`)
			return !found
		})
		return found
	})

	// Every EMF line is valid; the payout's lines carry its measures.
	type seen struct{ metric, function string }
	mine := map[seen]metrics.Sample{}
	counts := map[seen]int{}
	waittest.Until(t, 10*time.Second, "the delivery's metrics written", func() bool {
		clear(mine)
		clear(counts)
		for _, line := range emf.Lines() {
			if line == "" {
				continue
			}
			samples, err := metrics.Parse([]byte(line))
			if err != nil {
				t.Fatalf("not valid EMF: %v\n%s", err, line)
			}
			var root struct {
				CorrelationID string `json:"correlation_id"`
			}
			json.Unmarshal([]byte(line), &root)
			if root.CorrelationID != requestID {
				continue
			}
			for _, s := range samples {
				mine[seen{s.Name, s.Dimensions["Function"]}] = s
				counts[seen{s.Name, s.Dimensions["Function"]}]++
			}
		}
		_, ok := mine[seen{metrics.WebhookDeliveriesSucceeded, "webhook-worker"}]
		return ok
	})
	for _, w := range []struct {
		seen
		dims string
	}{
		{seen{metrics.PayoutsAccepted, "payments"}, "map[Currency:XAF Function:payments Operator:mtn]"},
		{seen{metrics.PayoutsSettled, "payout-worker"}, "map[Currency:XAF Function:payout-worker Operator:mtn]"},
		{seen{metrics.WebhookDeliveriesSucceeded, "webhook-worker"}, "map[Function:webhook-worker]"},
		{seen{metrics.WebhookDeliveryDelay, "webhook-worker"}, "map[Function:webhook-worker]"},
	} {
		s, ok := mine[w.seen]
		if n := counts[w.seen]; n > 1 && w.metric != metrics.WebhookDeliveriesSucceeded && w.metric != metrics.WebhookDeliveryDelay {
			t.Errorf("%s from %s written %d times for one payout", w.metric, w.function, n)
		}
		if !ok {
			t.Errorf("no %s from %s with the payout's correlation id; its lines: %v", w.metric, w.function, mine)
			continue
		}
		if got := fmt.Sprint(s.Dimensions); got != w.dims || s.Namespace != function.DefaultMetricsNamespace {
			t.Errorf("%s: namespace %q, dimensions %s, want %s", w.metric, s.Namespace, got, w.dims)
		}
	}

	// The logs of the payout's life, each with the request's id.
	want := map[string]bool{"payout accepted": false, "payment finished": false, "webhook attempt": false}
	for _, text := range logs.Lines() {
		var line struct {
			Msg           string `json:"msg"`
			CorrelationID string `json:"correlation_id"`
			TransactionID string `json:"transaction_id"`
		}
		if json.Unmarshal([]byte(text), &line) != nil {
			continue
		}
		if _, ok := want[line.Msg]; ok && line.CorrelationID == requestID {
			want[line.Msg] = true
		}
		// The operator's callback is a request of its own: its receipt is
		// logged under its id (and the payout's transaction_id); the
		// payout worker that applies it goes on under the payout's.
		if line.TransactionID == tx && line.CorrelationID != requestID && line.Msg != "operator callback queued" {
			t.Errorf("a log line of the payout with correlation id %q, want %q: %s", line.CorrelationID, requestID, text)
		}
	}
	for msg, ok := range want {
		if !ok {
			t.Errorf("no %q log line with the payout's correlation id %s", msg, requestID)
		}
	}
}
