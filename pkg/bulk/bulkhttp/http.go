// Package bulkhttp is the HTTP layer of pkg/bulk: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package bulkhttp

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"

	"payments/pkg/bulk"
	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/httpapi"
	"payments/pkg/ids"
	"payments/pkg/money"
	"payments/pkg/payments"
	"payments/pkg/spreadsheet"
)

// DefaultLimit is the page size of the batch and item lists.
const DefaultLimit = 20

// Routes registers the bulk payout routes of the payments function:
//
//	POST /payment/payouts/bulk                              accept a batch (JSON or CSV)
//	GET  /payment/payouts/bulk                              the company's batches
//	GET  /payment/payouts/bulk/{batchId}                    one batch
//	GET  /payment/payouts/bulk/{batchId}/items              its items, by status
//	GET  /payment/payouts/bulk/{batchId}/report.csv         its report
func Routes(rt *httpapi.Router, svc *bulk.Service) {
	h := handlers{svc}
	rt.Handle("POST /payment/payouts/bulk", h.submit, httpapi.Money(), httpapi.BodyLimit(MaxBodyBytes))
	rt.Handle("GET /payment/payouts/bulk", h.list)
	rt.Handle("GET /payment/payouts/bulk/{batchId}", h.get)
	rt.Handle("GET /payment/payouts/bulk/{batchId}/items", h.items)
	rt.Handle("GET /payment/payouts/bulk/{batchId}/report.csv", h.report)
}

type handlers struct{ svc *bulk.Service }

// AcceptedView is the answer to a batch's acceptance: the batch and its
// first rejected rows.
type AcceptedView struct {
	events.BulkBatch
	Rejected []RejectionView `json:"rejected"`
}

// RejectionView is a rejected row as the acceptance answers it.
type RejectionView struct {
	Row     int     `json:"row"`
	Field   *string `json:"field"`
	Code    string  `json:"code"`
	Message string  `json:"message"`
}

// ItemView is an item as the items route shows it. Amounts are major
// units; amount is null when the row's did not parse.
type ItemView struct {
	Row           int             `json:"row"`
	TransactionID *string         `json:"transaction_id"`
	ExternalID    *string         `json:"external_id"`
	Status        bulk.ItemStatus `json:"status"`
	Operator      string          `json:"operator"`
	Country       string          `json:"country"`
	PhoneNumber   string          `json:"phone_number"`
	Amount        *json.Number    `json:"amount"`
	FeeAmount     *json.Number    `json:"fee_amount"`
	Currency      string          `json:"currency"`
	FailureCode   *string         `json:"failure_code"`
	FailureField  *string         `json:"failure_field"`
	FailureReason *string         `json:"failure_reason"`
}

// FailedCode is the failure_code of an item whose payout FAILED.
const FailedCode = "PAYOUT_FAILED"

func (h handlers) submit(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	req, err := parseRequest(r)
	if err != nil {
		return err
	}
	a, err := h.svc.Submit(r.Context(), cid, req)
	if err != nil {
		return err
	}
	out := AcceptedView{BulkBatch: a.Batch.View(), Rejected: make([]RejectionView, len(a.Rejected))}
	for i, row := range a.Rejected {
		rej := row.Rejection
		out.Rejected[i] = RejectionView{Row: row.Input.Row, Field: optional(rej.Field), Code: rej.Code, Message: rej.Message}
	}
	httpapi.Respond(w, http.StatusAccepted, "Bulk payout accepted", out)
	return nil
}

// parseRequest reads a batch as JSON or, with Content-Type text/csv, as
// CSV with the description and mode in the query string.
func parseRequest(r *http.Request) (bulk.Request, error) {
	mt := "application/json"
	if ct := r.Header.Get("Content-Type"); ct != "" {
		var err error
		if mt, _, err = mime.ParseMediaType(ct); err != nil {
			return bulk.Request{}, httpapi.ErrUnsupportedMediaType
		}
	}
	if mt != "application/json" && mt != "text/csv" {
		return bulk.Request{}, httpapi.ErrUnsupportedMediaType
	}
	body, err := httpapi.ReadBodyLimit(r, MaxBodyBytes)
	if err != nil {
		return bulk.Request{}, err
	}
	if mt == "text/csv" {
		q := r.URL.Query()
		return ParseCSV(body, q.Get("description"), q.Get("mode"))
	}
	return ParseJSON(body)
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	cid, err := httpapi.Company(r)
	if err != nil {
		return err
	}
	p, err := httpapi.ParsePage(r, DefaultLimit)
	if err != nil {
		return err
	}
	res, err := h.svc.List(r.Context(), cid, p)
	if err != nil {
		return err
	}
	out := make([]events.BulkBatch, len(res.Items))
	for i, b := range res.Items {
		out[i] = b.View()
	}
	httpapi.RespondList(w, out, httpapi.Pagination(r, p, res.Total, res.Next))
	return nil
}

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	cid, id, err := batchOf(r)
	if err != nil {
		return err
	}
	b, err := h.svc.Get(r.Context(), cid, id)
	if err != nil {
		return err
	}
	httpapi.Respond(w, http.StatusOK, "Bulk payout retrieved successfully", b.View())
	return nil
}

func (h handlers) items(w http.ResponseWriter, r *http.Request) error {
	cid, id, err := batchOf(r)
	if err != nil {
		return err
	}
	status := bulk.ItemStatus(r.URL.Query().Get("status"))
	if status != "" && !slices.Contains(bulk.ItemStatuses, status) {
		return field.Invalid("status", "must be one of PENDING, PROCESSING, SUCCESS, FAILED, REJECTED")
	}
	p, err := httpapi.ParsePage(r, DefaultLimit)
	if err != nil {
		return err
	}
	res, err := h.svc.Items(r.Context(), cid, id, status, p)
	if err != nil {
		return err
	}
	out := make([]ItemView, len(res.Items))
	for i, it := range res.Items {
		out[i] = itemView(it)
	}
	httpapi.RespondList(w, out, httpapi.Pagination(r, p, res.Total, res.Next))
	return nil
}

// ReportHeader is the header row of a batch's report: the input columns,
// then the outcome.
var ReportHeader = append(append([]string{"row"}, Columns...), "transaction_id", "status", "fee_amount", "failure_code", "failure_reason")

func (h handlers) report(w http.ResponseWriter, r *http.Request) error {
	cid, id, err := batchOf(r)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := WriteReport(r.Context(), &buf, h.svc, cid, id); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="bulk-`+id+`.csv"`)
	w.WriteHeader(http.StatusOK)
	w.Write(buf.Bytes())
	return nil
}

// Reporter reads a batch's items for its report (bulk.Service.Report).
type Reporter interface {
	Report(ctx context.Context, companyID, id string, fn func(bulk.Item) error) error
}

// WriteReport writes the report.csv of the company's batch id to w:
// ReportHeader, then a row per item, every cell as text to a spreadsheet
// (spreadsheet.Text). The dashboard's report is this one.
func WriteReport(ctx context.Context, w io.Writer, svc Reporter, companyID, id string) error {
	out := csv.NewWriter(w)
	out.Write(ReportHeader)
	err := svc.Report(ctx, companyID, id, func(it bulk.Item) error {
		v := itemView(it)
		in := it.Input
		row := []string{
			strconv.Itoa(in.Row), in.ExternalID, in.Operator, in.Country, in.PhoneNumber, in.Amount, in.Currency, in.Reason, in.NotifyURL,
			text(v.TransactionID), string(v.Status), fee(v.FeeAmount), text(v.FailureCode), text(v.FailureReason),
		}
		for i := range row {
			row[i] = spreadsheet.Text(row[i])
		}
		return out.Write(row)
	})
	if err != nil {
		return err
	}
	out.Flush()
	return out.Error()
}

// batchOf returns the caller's company and the batch id of the path; an id
// that is not a UUID is no batch of the company.
func batchOf(r *http.Request) (companyID, id string, err error) {
	if companyID, err = httpapi.Company(r); err != nil {
		return "", "", err
	}
	id = r.PathValue("batchId")
	if !ids.IsUUID(id) {
		return "", "", bulk.ErrNotFound
	}
	return companyID, id, nil
}

// itemView returns it as the items route shows it.
func itemView(it bulk.Item) ItemView {
	v := ItemView{
		Row: it.Input.Row, Status: it.Status, Operator: it.Input.Operator, Country: it.Input.Country,
		PhoneNumber: it.Input.PhoneNumber, Currency: it.Input.Currency, ExternalID: optional(it.Input.ExternalID),
	}
	if a := it.Accepted; a != nil {
		v.TransactionID, v.ExternalID = &a.TransactionID, &a.ExternalID
		amount, fee := money.JSON(a.Amount, v.Currency), money.JSON(a.Fee, v.Currency)
		v.Amount, v.FeeAmount = &amount, &fee
	} else if minor, err := money.ParseAmount(json.RawMessage(it.Input.Amount), v.Currency); err == nil {
		amount := money.JSON(minor, v.Currency)
		v.Amount = &amount
	}
	if rej := it.Rejection; rej != nil {
		v.FailureCode, v.FailureField, v.FailureReason = &rej.Code, optional(rej.Field), &rej.Message
	}
	if p := it.Payment; p != nil && p.Status == payments.StatusFailed {
		code, reason := FailedCode, p.ErrorMessage
		v.FailureCode, v.FailureReason = &code, &reason
	}
	return v
}

// optional returns nil for "", else &s.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// fee returns *n as text, or "" for nil.
func fee(n *json.Number) string {
	if n == nil {
		return ""
	}
	return n.String()
}

// text returns *s, or "" for nil.
func text(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}
