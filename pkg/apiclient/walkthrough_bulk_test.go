package apiclient_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"payments/pkg/apiclient"
	"payments/pkg/waittest"
)

// payroll is step 29's CSV: rows 1 and 2 valid, row 3's phone number too
// short, row 4 row 1's external_id again.
const payroll = `external_id,operator,country,phone_number,amount,currency,reason
june-001,mtn,CM,237670000001,1500,XAF,June salary
june-002,orange,CM,237690000000,2500,XAF,June salary
june-003,mtn,CM,2376700,1000,XAF,June salary
june-001,mtn,CM,237670000004,1000,XAF,June salary
`

// Steps 29 to 31: a payroll sent as CSV, two rows rejected and two
// reserved at once (payout_reserved read before and after), the same
// request replayed by its Idempotency-Key, then paid as two payouts, one
// of which fails and is refunded, and the report.
func (w *walk) bulk() {
	credit, err := w.c.CreditWalletWithResponse(w.ctx, w.xafWallet, apiclient.CreditWalletJSONRequestBody{
		Balance: "payout", Amount: "50000", Reference: "payroll-june"}, adminKey)
	w.ok(credit, err, http.StatusOK, "29. credit the payroll")
	before := string(credit.JSON200.Data.Wallet.PayoutReserved)

	params := &apiclient.CreateBulkPayoutParams{Description: ptr("June payroll"), IdempotencyKey: ptr("payroll-" + w.companyID)}
	batch, err := w.c.CreateBulkPayoutWithBodyWithResponse(w.ctx, params, "text/csv", strings.NewReader(payroll), w.auth)
	w.ok(batch, err, http.StatusAccepted, "29. the payroll")
	b := batch.JSON202.Data
	var rejected []string
	for _, r := range b.Rejected {
		rejected = append(rejected, fmt.Sprint(r.Row, " ", r.Code))
	}
	w.equal("29. accepted, rejected, total amount, total fees", []any{b.AcceptedCount, b.RejectedCount, b.TotalAmount, b.TotalFees},
		[]any{2, 2, "4000", "61"})
	w.equal("29. the rejected rows", rejected, []string{"3 INVALID_FIELD", "4 DUPLICATE_EXTERNAL_ID"})
	_, reserved, _, _ := w.xafWalletBalances("29")
	w.equal("29. payout_reserved after the batch: before + 1500 + 23 + 2500 + 38", reserved, sum(before, 4061))

	replay, err := w.c.CreateBulkPayoutWithBodyWithResponse(w.ctx, params, "text/csv", strings.NewReader(payroll), w.auth)
	w.ok(replay, err, http.StatusAccepted, "29. the payroll again, with its Idempotency-Key")
	w.equal("29. the replay's batch", replay.JSON202.Data.BatchId, b.BatchId)
	w.equal("29. Idempotent-Replayed", replay.HTTPResponse.Header.Get("Idempotent-Replayed"), "true")

	id := b.BatchId.String()
	var done apiclient.BulkBatch
	waittest.Until(w.t, time.Minute, "30. the batch COMPLETED", func() bool {
		res, err := w.c.GetBulkPayoutWithResponse(w.ctx, id, w.auth)
		if err != nil || res.JSON200 == nil {
			return false
		}
		done = res.JSON200.Data
		return done.Status == "COMPLETED"
	})
	w.equal("30. counts: success, failed, rejected", []int{done.Counts.Success, done.Counts.Failed, done.Counts.Rejected}, []int{1, 1, 2})
	w.equal("30. totals: reserved, paid, fees, refunded", []any{done.Totals.Reserved, done.Totals.Paid, done.Totals.Fees, done.Totals.Refunded},
		[]any{"0", "1500", "23", "2538"})
	failed, err := w.c.ListBulkPayoutItemsWithResponse(w.ctx, id, &apiclient.ListBulkPayoutItemsParams{Status: ptr(apiclient.ListBulkPayoutItemsParamsStatus("FAILED"))}, w.auth)
	w.ok(failed, err, http.StatusOK, "30. the failed items")
	if len(failed.JSON200.Data) != 1 || failed.JSON200.Data[0].Row != 2 {
		w.t.Errorf("30. failed items %+v, want row 2", failed.JSON200.Data)
	}

	report, err := w.c.GetBulkPayoutReportWithResponse(w.ctx, id, w.auth)
	w.ok(report, err, http.StatusOK, "31. the report")
	rows, err := csv.NewReader(strings.NewReader(string(report.Body))).ReadAll()
	if err != nil || len(rows) == 0 {
		w.t.Fatalf("31. the report is not CSV: %v\n%s", err, report.Body)
	}
	status := slices.Index(rows[0], "status")
	var statuses []string
	for _, r := range rows[1:] {
		statuses = append(statuses, r[0]+" "+r[status])
	}
	w.equal("31. the report's rows and statuses", statuses, []string{"1 SUCCESS", "2 FAILED", "3 REJECTED", "4 REJECTED"})
}
