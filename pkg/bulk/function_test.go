package bulk_test

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"payments/pkg/app/apptest"
)

// batchEnv is the payments test environment with a company whose XAF/CM
// wallet holds payout (major units).
type batchEnv struct {
	*apptest.PaymentsTestEnv
	companyID, token, walletID string
}

func newBatchEnv(t *testing.T, payout string) batchEnv {
	e := apptest.NewPaymentsTestEnv(t)
	id, token, wallet := e.Company(payout)
	return batchEnv{e, id, token, wallet}
}

// item returns one JSON item of a batch paying amount XAF to phone.
func item(phone string, amount int, ext string) string {
	s := fmt.Sprintf(`{"operator":"mtn","country":"CM","phone_number":%q,"amount":%d,"currency":"XAF"`, phone, amount)
	if ext != "" {
		s += fmt.Sprintf(`,"external_id":%q`, ext)
	}
	return s + "}"
}

func batch(mode string, items ...string) string {
	return `{"mode":"` + mode + `","description":"June payroll","items":[` + strings.Join(items, ",") + `]}`
}

// submit posts body (JSON, or CSV with query) as a batch.
func (e batchEnv) submit(body string, headers ...string) apptest.Result {
	e.T.Helper()
	return e.Call(e.Payments, e.token, "POST", "/payment/payouts/bulk", body, headers...)
}

// get reads batch id.
func (e batchEnv) get(id string) apptest.Result {
	e.T.Helper()
	return e.Call(e.Payments, e.token, "GET", "/payment/payouts/bulk/"+id, "")
}

// settle runs the payout worker until batch id is COMPLETED.
func (e batchEnv) settle(id string) apptest.Result {
	e.T.Helper()
	e.Pump(60*time.Second, func() bool { return e.get(id).Str("data", "status") == "COMPLETED" })
	return e.get(id)
}

// wallet returns the wallet's payout balance, reserved and available.
func (e batchEnv) wallet() string {
	e.T.Helper()
	w := e.Wallet(e.token, e.walletID)
	return fmt.Sprintf("%v/%v/%v", w["payout_balance"], w["payout_reserved"], w["payout_available"])
}

// rejected returns the 202's rejected rows as "row field code" lines.
func rejected(r apptest.Result) string {
	var b strings.Builder
	for _, it := range r.Data()["rejected"].([]any) {
		m := it.(map[string]any)
		fmt.Fprintf(&b, "%v %v %v\n", m["row"], m["field"], m["code"])
	}
	return b.String()
}

// TestMixedBatch is the first proof: a batch of successful and
// failing numbers, invalid rows and duplicate external_ids gives exactly
// the expected rows; the wallet holds the accepted amounts and fees while
// they are open; each item is an ordinary payout, and once all are final
// the batch is COMPLETED, its report has one row per item, and the ledger
// explains every item.
func TestMixedBatch(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "100000")
	if r := e.Call(e.Payments, e.token, "POST", "/payment/payout", item("237670000009", 1000, "used-1")); r.Status != 200 {
		t.Fatalf("payout: %s", r.Raw)
	}
	e.Pump(30*time.Second, func() bool { return e.wallet() == "98985/0/98985" })

	r := e.submit(batch("partial",
		item("237670000001", 1000, "b-1"),
		item("237670000000", 2000, "b-2"),
		item("12", 1000, "b-3"),
		item("237670000002", 1000, "used-1"),
		item("237670000003", 1000, "b-1"),
		item("237670000004", 400, ""),
	))
	if r.Status != 202 {
		t.Fatalf("submit: %d %s", r.Status, r.Raw)
	}
	want := "3 phone_number INVALID_FIELD\n4 external_id DUPLICATE_EXTERNAL_ID\n5 external_id DUPLICATE_EXTERNAL_ID\n"
	if got := rejected(r); got != want {
		t.Fatalf("rejected rows:\n%s\nwant:\n%s", got, want)
	}
	d := r.Data()
	if d["item_count"] != json.Number("6") || d["accepted_count"] != json.Number("3") || d["rejected_count"] != json.Number("3") ||
		d["mode"] != "partial" || d["currency"] != "XAF" || d["total_amount"] != json.Number("3400") || d["total_fees"] != json.Number("51") ||
		d["description"] != "June payroll" {
		t.Fatalf("batch: %s", r.Raw)
	}
	// Reserved at once: the accepted amounts and fees.
	if got := e.wallet(); got != "98985/3451/95534" {
		t.Fatalf("wallet while open: %s", got)
	}
	e.Verify(e.companyID)
	id := r.Str("data", "batch_id")

	done := e.settle(id)
	if c := done.Str("data", "counts"); c != `{"failed":1,"pending":0,"processing":0,"rejected":3,"success":2}` {
		t.Fatalf("counts: %s", c)
	}
	if tt := done.Str("data", "totals"); tt != `{"fees":"21","paid":"1400","refunded":"2030","reserved":"0"}` &&
		tt != `{"fees":21,"paid":1400,"refunded":2030,"reserved":0}` {
		t.Fatalf("totals: %s", tt)
	}
	if got := e.wallet(); got != "97564/0/97564" {
		t.Fatalf("wallet after: %s", got)
	}
	e.Verify(e.companyID)

	// Each accepted item is an ordinary payout.
	items := e.Call(e.Payments, e.token, "GET", "/payment/payouts/bulk/"+id+"/items", "")
	var statuses []string
	for _, it := range items.Items() {
		m := it.(map[string]any)
		statuses = append(statuses, fmt.Sprintf("%v:%v", m["row"], m["status"]))
		if tx, ok := m["transaction_id"].(string); ok {
			if s := e.Status(e.token, tx).Str("data", "status"); s != m["status"] {
				t.Errorf("row %v: item %v, payout %s", m["row"], m["status"], s)
			}
		}
	}
	if got := strings.Join(statuses, " "); got != "1:SUCCESS 2:FAILED 3:REJECTED 4:REJECTED 5:REJECTED 6:SUCCESS" {
		t.Fatalf("items: %s", got)
	}
	failed := e.Call(e.Payments, e.token, "GET", "/payment/payouts/bulk/"+id+"/items?status=FAILED", "")
	if len(failed.Items()) != 1 || failed.Str("meta", "total") != "1" {
		t.Fatalf("failed items: %s", failed.Raw)
	}
	if f := failed.Items()[0].(map[string]any); f["failure_code"] != "PAYOUT_FAILED" || f["failure_reason"] != "recipient account not found" {
		t.Fatalf("failed item: %v", f)
	}

	report := e.Send(e.Payments, e.token, "GET", "/payment/payouts/bulk/"+id+"/report.csv", "")
	rows, err := csv.NewReader(strings.NewReader(report.Body)).ReadAll()
	if err != nil || report.StatusCode != 200 || len(rows) != 7 {
		t.Fatalf("report: %d %v\n%s", report.StatusCode, err, report.Body)
	}
	if got := strings.Join(rows[0], ","); got != "row,external_id,operator,country,phone_number,amount,currency,reason,notify_url,transaction_id,status,fee_amount,failure_code,failure_reason" {
		t.Fatalf("report header: %s", got)
	}
	if got := strings.Join(rows[2], ","); !strings.HasPrefix(got, "2,b-2,mtn,CM,237670000000,2000,XAF,,,") || !strings.HasSuffix(got, ",FAILED,30,PAYOUT_FAILED,recipient account not found") {
		t.Fatalf("report row 2: %s", got)
	}

	// One payment.bulk.completed, among the payouts' own events.
	if n := strings.Count(e.WebhookEvents(), " COMPLETED\n"); n != 1 {
		t.Fatalf("%d payment.bulk.completed events, want 1", n)
	}
}

// TestAllOrNothing: an invalid item or a total above payout_available
// refuses the whole batch with a 400 naming it, and reserves nothing.
func TestAllOrNothing(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "3000")
	tests := []struct {
		name, body, code, field string
	}{
		{"an invalid item", batch("all_or_nothing", item("237670000001", 1000, ""), item("12", 1000, "")), "INVALID_FIELD", "items[2].phone_number"},
		{"over budget", batch("all_or_nothing", item("237670000001", 1000, ""), item("237670000002", 2000, "")), "INSUFFICIENT_BALANCE", "items"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := e.submit(tt.body)
			if r.Status != 400 || r.Str("code") != tt.code || r.Str("field") != tt.field {
				t.Fatalf("submit: %d %s", r.Status, r.Raw)
			}
			if got := e.wallet(); got != "3000/0/3000" {
				t.Fatalf("wallet: %s", got)
			}
		})
	}
	if r := e.Call(e.Payments, e.token, "GET", "/payment/payouts/bulk", ""); r.Str("meta", "total") != "0" {
		t.Fatalf("batches: %s", r.Raw)
	}
	e.Verify(e.companyID)
}

// TestReportCellsAreText: what a company typed that a spreadsheet would
// run as a formula (a cell beginning with =, +, -, @, a tab or a carriage
// return) comes back in report.csv prefixed with ', as text; the rest as
// typed.
func TestReportCellsAreText(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "100000")
	tests := []struct{ typed, want string }{
		{`=HYPERLINK("x")`, `'=HYPERLINK("x")`},
		{"+1", "'+1"},
		{"-2", "'-2"},
		{"@SUM(A1)", "'@SUM(A1)"},
		{"\tTab", "'\tTab"},
		{"\rReturn", "'\rReturn"},
		{"June = pay", "June = pay"},
	}
	var items []string
	for i, tt := range tests {
		it := item(fmt.Sprintf("23767000%04d", i+1), 100, "")
		reason, err := json.Marshal(tt.typed)
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, strings.TrimSuffix(it, "}")+`,"reason":`+string(reason)+"}")
	}
	r := e.submit(batch("partial", items...))
	if r.Status != 202 {
		t.Fatalf("submit: %s", r.Raw)
	}
	report := e.Send(e.Payments, e.token, "GET", "/payment/payouts/bulk/"+r.Str("data", "batch_id")+"/report.csv", "")
	rows, err := csv.NewReader(strings.NewReader(report.Body)).ReadAll()
	if err != nil || len(rows) != len(tests)+1 {
		t.Fatalf("report: %v\n%s", err, report.Body)
	}
	col := slices.Index(rows[0], "reason")
	for i, tt := range tests {
		if got := rows[i+1][col]; got != tt.want {
			t.Errorf("reason %q came back %q, want %q", tt.typed, got, tt.want)
		}
	}
	e.Verify(e.companyID)
}

// TestPartialOverBudget: a partial batch reserves in file order while the
// wallet covers each item, to the last franc: a later, smaller item that
// fits is accepted.
func TestPartialOverBudget(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "10150")
	r := e.submit(batch("partial",
		item("237670000001", 5000, ""), // 5075
		item("237670000002", 4000, ""), // 4060: 9135
		item("237670000003", 2000, ""), // 2030: over
		item("237670000004", 1000, ""), // 1015: 10150, all of it
		item("237670000005", 200, ""),  // 203: over
	))
	if r.Status != 202 {
		t.Fatalf("submit: %s", r.Raw)
	}
	if got := rejected(r); got != "3 <nil> INSUFFICIENT_BALANCE\n5 <nil> INSUFFICIENT_BALANCE\n" {
		t.Fatalf("rejected: %s", got)
	}
	if got := e.wallet(); got != "10150/10150/0" {
		t.Fatalf("wallet: %s", got)
	}
	e.Verify(e.companyID)
	e.settle(r.Str("data", "batch_id"))
	if got := e.wallet(); got != "0/0/0" {
		t.Fatalf("wallet after: %s", got)
	}
	e.Verify(e.companyID)
}

// TestCSVAndJSON: the same rows as CSV and as JSON give the same batch.
func TestCSVAndJSON(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "100000")
	j := e.submit(batch("partial", item("237670000001", 1000, "j-1"), item("237670000000", 500, ""), item("2376700", 100, "")))
	csvBody := "operator,country,phone_number,amount,currency,external_id\n" +
		"mtn,CM,237670000001,1000,XAF,c-1\nmtn,CM,237670000000,500,XAF,\nmtn,CM,2376700,100,XAF,\n"
	c := e.submit(csvBody, "content-type", "text/csv")
	q := url.Values{"mode": {"partial"}, "description": {"June payroll"}}
	c2 := e.Call(e.Payments, e.token, "POST", "/payment/payouts/bulk?"+q.Encode(), csvBody[:strings.Index(csvBody, "\n")+1]+
		"mtn,CM,237670000001,1000,XAF,c-2\nmtn,CM,237670000000,500,XAF,\nmtn,CM,2376700,100,XAF,\n", "content-type", "text/csv")
	for _, r := range []apptest.Result{j, c, c2} {
		if r.Status != 202 {
			t.Fatalf("submit: %s", r.Raw)
		}
	}
	for _, k := range []string{"item_count", "accepted_count", "rejected_count", "total_amount", "total_fees", "mode", "currency"} {
		if j.Str("data", k) != c.Str("data", k) {
			t.Errorf("%s: JSON %s, CSV %s", k, j.Str("data", k), c.Str("data", k))
		}
	}
	if rejected(j) != rejected(c) || rejected(j) != "3 phone_number INVALID_FIELD\n" {
		t.Errorf("rejected: JSON %q, CSV %q", rejected(j), rejected(c))
	}
	if c.Str("data", "description") != "<nil>" || c2.Str("data", "description") != "June payroll" {
		t.Errorf("descriptions: %s, %s", c.Str("data", "description"), c2.Str("data", "description"))
	}
	for _, r := range []apptest.Result{j, c, c2} {
		e.settle(r.Str("data", "batch_id"))
		report := e.Send(e.Payments, e.token, "GET", "/payment/payouts/bulk/"+r.Str("data", "batch_id")+"/report.csv", "")
		if n := strings.Count(report.Body, "\n"); n != 4 {
			t.Errorf("report of %d lines:\n%s", n, report.Body)
		}
	}
	e.Verify(e.companyID)
}

// TestBadBatches: what is not a batch is a 4xx naming the field.
func TestBadBatches(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "1000")
	tests := []struct {
		name, body, contentType string
		status                  int
		field                   string
	}{
		{"no items", `{"items":[]}`, "", 400, "items"},
		{"a bad mode", `{"mode":"some","items":[` + item("237670000001", 10, "") + `]}`, "", 400, "mode"},
		{"an unknown column", "operator,country,phone,amount,currency\n", "text/csv", 400, "phone"},
		{"a missing column", "operator,country,phone_number,currency\n", "text/csv", 400, "amount"},
		{"a ragged row", "operator,country,phone_number,amount,currency\nmtn,CM\n", "text/csv", 400, "body"},
		{"another media type", "x", "text/plain", 415, ""},
		{"too many items", `{"items":[` + strings.Repeat(item("237670000001", 10, "")+",", 10000) + item("237670000001", 10, "") + `]}`, "", 400, "items"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var headers []string
			if tt.contentType != "" {
				headers = []string{"content-type", tt.contentType}
			}
			r := e.submit(tt.body, headers...)
			if r.Status != tt.status || (tt.field != "" && r.Str("field") != tt.field) {
				t.Fatalf("submit: %d %s", r.Status, r.Raw)
			}
		})
	}
	other := newBatchEnv(t, "1000")
	ok := other.submit(batch("partial", item("237670000001", 10, "")))
	if r := e.get(ok.Str("data", "batch_id")); r.Status != 404 || r.Str("code") != "BULK_BATCH_NOT_FOUND" {
		t.Fatalf("another company's batch: %s", r.Raw)
	}
	if r := e.get("not-an-id"); r.Status != 404 {
		t.Fatalf("a bad id: %s", r.Raw)
	}
}

// TestNothingAccepted: a partial batch none of whose items is accepted is
// answered 202, already COMPLETED, and reserves nothing.
func TestNothingAccepted(t *testing.T) {
	t.Parallel()
	e := newBatchEnv(t, "100")
	r := e.submit(batch("partial", item("12", 10, ""), item("237670000001", 1000, "")))
	if r.Status != 202 || r.Str("data", "status") != "COMPLETED" || r.Str("data", "accepted_count") != "0" ||
		r.Str("data", "currency") != "<nil>" || r.Str("data", "completed_at") == "<nil>" {
		t.Fatalf("submit: %s", r.Raw)
	}
	if got := rejected(r); got != "1 phone_number INVALID_FIELD\n2 <nil> INSUFFICIENT_BALANCE\n" {
		t.Fatalf("rejected: %s", got)
	}
	if got := e.wallet(); got != "100/0/100" {
		t.Fatalf("wallet: %s", got)
	}
	e.Verify(e.companyID)
}
