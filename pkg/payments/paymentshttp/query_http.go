package paymentshttp

import (
	"fmt"
	"net/http"
	"slices"

	"payments/pkg/field"
	"payments/pkg/httpapi"
	"payments/pkg/payments"
)

// ParseQuery reads the filters of GET /payment/transactions: status and
// type (exact, uppercase), external_id (substring, at most 255 characters),
// reconciliation_required (true or false), from_date (inclusive) and
// to_date (exclusive) as RFC 3339 date-times or YYYY-MM-DD dates (midnight
// UTC). A bad value is a 400 naming the parameter.
func ParseQuery(r *http.Request) (payments.Query, error) {
	v := r.URL.Query()
	var q payments.Query
	if s := v.Get("status"); s != "" {
		if !slices.Contains(payments.Statuses, payments.Status(s)) {
			return q, field.Invalid("status", "must be one of PENDING, PROCESSING, SUCCESS, FAILED")
		}
		q.Status = payments.Status(s)
	}
	if s := v.Get("type"); s != "" {
		if !slices.Contains(payments.Types, payments.Type(s)) {
			return q, field.Invalid("type", "must be COLLECTION or PAYOUT")
		}
		q.Type = payments.Type(s)
	}
	if s := v.Get("external_id"); s != "" {
		if len(s) > payments.MaxTextLength {
			return q, field.Invalid("external_id", fmt.Sprintf("must be at most %d characters", payments.MaxTextLength))
		}
		q.ExternalID = s
	}
	if v.Has("reconciliation_required") {
		b, err := httpapi.ParseBool(r, "reconciliation_required", false)
		if err != nil {
			return q, err
		}
		q.ReconciliationRequired = &b
	}
	var err error
	q.From, q.To, err = httpapi.ParseDateRange(r)
	return q, err
}
