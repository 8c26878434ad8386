package dashboard

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"

	"payments/pkg/bulk"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/idempotency"
	"payments/pkg/page"
	"payments/pkg/sessions"
)

// Batches are the company's bulk payouts (bulk.Service).
type Batches interface {
	Preview(ctx context.Context, companyID string, req bulk.Request) (bulk.Preview, error)
	Submit(ctx context.Context, companyID string, req bulk.Request) (bulk.Acceptance, error)
	Get(ctx context.Context, companyID, id string) (bulk.Batch, error)
	List(ctx context.Context, companyID string, p page.Request) (page.Result[bulk.Batch], error)
	bulkhttp.Reporter
}

// MaxUpload is the largest payroll file the dashboard takes: its preview
// carries the file on to the confirmation, and a page must stay within
// the 6 MB a Lambda function answers. Larger batches go through the API
// (POST /payment/payouts/bulk, 4 MiB).
const MaxUpload = 1 << 20

// bulkRoutes are the bulk payout pages.
func (h *Handler) bulkRoutes() []route {
	return []route{
		{"POST /dashboard/payouts/bulk/preview", MoveMoney, h.bulkPreview},
		{"POST /dashboard/payouts/bulk", MoveMoney, h.bulkSubmit},
		{"GET /dashboard/payouts/bulk/{id}", ReadMoney, h.batchPage},
		{"GET /dashboard/payouts/bulk/{id}/report.csv", ReadMoney, h.batchReport},
	}
}

// bulkForm is the upload's form, and the confirmation's: the file's text,
// its description and mode, and the key the confirmation is sent with.
type bulkForm struct {
	Key, CSV, Description, Mode string
}

// previewData is the preview's page.
type previewData struct {
	Form                      bulkForm
	Items, Accepted, Rejected int
	Total, Fees, Refused      string
	Rows                      []previewRow
	More                      int
}

// previewRow is a row the batch would reject.
type previewRow struct {
	Row                              int
	ExternalID, Phone, Amount, Field string
	Message                          string
}

// batchRow is a batch in a list, and a batch's page.
type batchRow struct {
	ID, Description, Mode, Status, Created                            string
	Items, Accepted, Rejected, Processing, Succeeded, Failed, Pending int
	Total, Paid, Refunded                                             string
	Done                                                              bool
}

func batchRowOf(b bulk.Batch) batchRow {
	return batchRow{
		ID: b.ID, Description: b.Description, Mode: string(b.Mode), Status: string(b.Status()), Created: when(b.CreatedAt),
		Items: b.ItemCount, Accepted: b.AcceptedCount, Rejected: b.RejectedCount,
		Processing: b.Processing, Succeeded: b.Succeeded, Failed: b.Failed,
		Pending: b.Pending(),
		Total:   Amount(b.TotalAmount+b.TotalFees, b.Currency), Paid: Amount(b.Paid+b.FeesPaid, b.Currency),
		Refunded: Amount(b.Refunded, b.Currency), Done: b.Status() == bulk.StatusCompleted,
	}
}

// readBulkForm reads the upload (a file, multipart) or the confirmation
// (the file's text, carried by the preview).
func readBulkForm(w http.ResponseWriter, r *http.Request) (bulkForm, error) {
	r.Body = http.MaxBytesReader(w, r.Body, 2*MaxUpload+64<<10)
	f := bulkForm{}
	if err := r.ParseMultipartForm(2 * MaxUpload); err != nil && !errors.Is(err, http.ErrNotMultipart) {
		return f, errUploadTooLarge
	}
	f.Key, f.Description, f.Mode, f.CSV = r.FormValue("form_key"), r.FormValue("description"), r.FormValue("mode"), r.FormValue("csv")
	if file, _, err := r.FormFile("file"); err == nil {
		defer file.Close()
		b, err := io.ReadAll(io.LimitReader(file, MaxUpload+1))
		if err != nil {
			return f, err
		}
		f.CSV = string(b)
	}
	if len(f.CSV) > MaxUpload {
		return f, errUploadTooLarge
	}
	return f, nil
}

// errUploadTooLarge is a file over MaxUpload.
var errUploadTooLarge = errors.New("dashboard: upload too large")

// request returns the batch the form describes, or the API's refusal of
// its file.
func (f bulkForm) request() (bulk.Request, error) {
	return bulkhttp.ParseCSV([]byte(f.CSV), f.Description, f.Mode)
}

// bulkPreview shows what the batch of the uploaded file would be: its
// rejected rows, by the bulk route's own checks, and what the rest would
// reserve; nothing is reserved. Its confirmation sends the file on.
func (h *Handler) bulkPreview(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	f, err := readBulkForm(w, r)
	if err == nil && f.CSV == "" {
		err = errNoFile
	}
	var req bulk.Request
	if err == nil {
		req, err = f.request()
	}
	var p bulk.Preview
	if err == nil {
		p, err = h.deps.Batches.Preview(r.Context(), s.CompanyID, req)
	}
	if err != nil {
		h.bulkRefused(w, r, s, err)
		return
	}
	f.Key = newFormKey()
	d := previewData{Form: f, Items: p.ItemCount, Accepted: p.AcceptedCount, Rejected: p.RejectedCount,
		Total: Amount(p.TotalAmount+p.TotalFees, p.Currency), Fees: Amount(p.TotalFees, p.Currency), More: p.RejectedCount - len(p.Rejected)}
	if p.Refused != nil {
		msg, _, ok := h.refusal(p.Refused)
		if !ok {
			h.failed(w, r, p.Refused)
			return
		}
		d.Refused = msg
	}
	for _, row := range p.Rejected {
		d.Rows = append(d.Rows, previewRow{Row: row.Row, ExternalID: row.ExternalID, Phone: row.PhoneNumber,
			Amount: row.Amount + " " + row.Currency, Field: row.Rejection.Field, Message: row.Rejection.Message})
	}
	h.render(w, r, http.StatusOK, "bulk-preview", view{Title: "Check the payroll", Nav: "payouts", Data: d})
}

// errNoFile is an upload without a file.
var errNoFile = errors.New("dashboard: no file")

// bulkRefused shows the Payouts page with what was wrong with the upload.
func (h *Handler) bulkRefused(w http.ResponseWriter, r *http.Request, s sessions.Session, err error) {
	var msg string
	switch {
	case errors.Is(err, errNoFile):
		msg = "Choose a CSV file to upload."
	case errors.Is(err, errUploadTooLarge):
		msg = "The file is larger than 1 MiB. Split it, or send it through the API."
	default:
		var ok bool
		if msg, _, ok = h.refusal(err); !ok {
			h.failed(w, r, err)
			return
		}
	}
	h.renderPayouts(w, r, s, http.StatusUnprocessableEntity, h.newPayoutForm(""), msg)
}

// bulkSubmit submits the confirmed batch, once per confirmation, and
// shows its progress.
func (h *Handler) bulkSubmit(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	f, err := readBulkForm(w, r)
	var req bulk.Request
	if err == nil {
		req, err = f.request()
	}
	if err == nil {
		var body bytes.Buffer
		body.WriteString(f.Description + "\x00" + f.Mode + "\x00" + f.CSV)
		hash := idempotency.RequestHash(r.Method, r.URL.Path, body.Bytes())
		var id string
		id, err = h.once(r.Context(), s.CompanyID, f.Key, hash, func(ctx context.Context) (string, error) {
			a, err := h.deps.Batches.Submit(ctx, s.CompanyID, req)
			return a.Batch.ID, err
		})
		if err == nil {
			h.record(r, s, "Bulk payout submitted", id)
			http.Redirect(w, r, "/dashboard/payouts/bulk/"+id, http.StatusSeeOther)
			return
		}
	}
	h.bulkRefused(w, r, s, err)
}

// batchPage shows a batch's progress; while it is not completed its
// progress section asks for itself again every two seconds (htmx).
func (h *Handler) batchPage(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	b, err := h.deps.Batches.Get(r.Context(), s.CompanyID, r.PathValue("id"))
	if errors.Is(err, bulk.ErrNotFound) {
		h.notFound(w, r)
		return
	}
	if err != nil {
		h.failed(w, r, err)
		return
	}
	title := "Bulk payout"
	if b.Description != "" {
		title += " " + strconv.Quote(b.Description)
	}
	h.render(w, r, http.StatusOK, "batch", view{Title: title, Nav: "payouts", Data: batchRowOf(b)})
}

// batchReport answers a batch's report.csv, the API's.
func (h *Handler) batchReport(w http.ResponseWriter, r *http.Request, s sessions.Session) {
	id := r.PathValue("id")
	var buf bytes.Buffer
	err := bulkhttp.WriteReport(r.Context(), &buf, h.deps.Batches, s.CompanyID, id)
	if errors.Is(err, bulk.ErrNotFound) {
		h.notFound(w, r)
		return
	}
	if err != nil {
		h.failed(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="bulk-`+id+`.csv"`)
	w.Write(buf.Bytes())
}
