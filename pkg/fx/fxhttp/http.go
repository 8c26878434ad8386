// Package fxhttp is the HTTP layer of pkg/fx: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package fxhttp

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"

	"payments/pkg/field"
	"payments/pkg/fx"
	"payments/pkg/httpapi"
	"payments/pkg/money"
	"payments/pkg/timestamp"
)

// Companies checks that a company exists (the operator console).
type Companies interface {
	// Check returns nil when company id exists.
	Check(ctx context.Context, id string) error
}

// RateResponse is a rate as the routes show it.
type RateResponse struct {
	FromCurrency   string      `json:"from_currency"`
	ToCurrency     string      `json:"to_currency"`
	Rate           json.Number `json:"rate"`
	ExchangeRateID string      `json:"exchangeRateId"`
	UpdatedAt      string      `json:"updated_at"`
}

// rateResponse returns r as the routes show it.
func rateResponse(r fx.Rate) RateResponse {
	return RateResponse{
		FromCurrency: r.From, ToCurrency: r.To, Rate: json.Number(r.Value.String()),
		ExchangeRateID: r.ID, UpdatedAt: timestamp.Format(r.UpdatedAt),
	}
}

// ratesResponse is the answer of GET and PUT
// /admin/companies/{id}/exchange-rates.
type ratesResponse struct {
	CompanyID string         `json:"company_id"`
	Rates     []RateResponse `json:"rates"`
}

func newRatesResponse(companyID string, rs []fx.Rate) ratesResponse {
	out := ratesResponse{CompanyID: companyID, Rates: make([]RateResponse, len(rs))}
	for i, r := range rs {
		out.Rates[i] = rateResponse(r)
	}
	return out
}

// AdminRoutes registers the operator console's routes of a company's
// exchange rates: GET and PUT /admin/companies/{id}/exchange-rates.
func AdminRoutes(rt *httpapi.Router, svc *fx.Service, companies Companies) {
	rt.Handle("GET /admin/companies/{id}/exchange-rates", func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		if err := companies.Check(r.Context(), id); err != nil {
			return err
		}
		rs, err := svc.Store.Rates(r.Context(), id)
		if err != nil {
			return err
		}
		httpapi.Respond(w, http.StatusOK, "Exchange rates retrieved successfully", newRatesResponse(id, rs))
		return nil
	})
	rt.Handle("PUT /admin/companies/{id}/exchange-rates", func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		var in fx.SetRatesInput
		if err := httpapi.Decode(r, &in); err != nil {
			return err
		}
		if err := companies.Check(r.Context(), id); err != nil {
			return err
		}
		rs, err := svc.SetRates(r.Context(), id, in)
		if err != nil {
			return err
		}
		httpapi.Respond(w, http.StatusOK, "Exchange rates updated successfully", newRatesResponse(id, rs))
		return nil
	})
}

// ConvertInput is the body of POST /company/exchange-rates/convert.
type ConvertInput struct {
	FromCurrency string          `json:"fromCurrency"`
	ToCurrency   string          `json:"toCurrency"`
	Amount       json.RawMessage `json:"amount"`
}

// convertResponse is the data of POST /company/exchange-rates/convert
// (spec §4.10): the price of a deposit (§4.9). amount, feeAmount (in
// feeCurrency, fromCurrency) and totalAmount are what the source is
// debited; convertedAmount and netAmount, equal, what the destination is
// credited.
type convertResponse struct {
	ExchangeRateID  string      `json:"exchangeRateId"`
	FromCurrency    string      `json:"fromCurrency"`
	ToCurrency      string      `json:"toCurrency"`
	Rate            json.Number `json:"rate"`
	Amount          json.Number `json:"amount"`
	ConvertedAmount json.Number `json:"convertedAmount"`
	FeeAmount       json.Number `json:"feeAmount"`
	FeeCurrency     string      `json:"feeCurrency"`
	TotalAmount     json.Number `json:"totalAmount"`
	NetAmount       json.Number `json:"netAmount"`
	UpdatedAt       string      `json:"updatedAt"`
}

// Routes registers POST /company/exchange-rates/convert, the quote of a
// deposit at the company's current rate: read-only.
func Routes(rt *httpapi.Router, svc *fx.Service) {
	rt.Handle("POST /company/exchange-rates/convert", func(w http.ResponseWriter, r *http.Request) error {
		var in ConvertInput
		if err := httpapi.Decode(r, &in); err != nil {
			return err
		}
		switch {
		case !money.Supported(in.FromCurrency):
			return field.Invalid("fromCurrency", "must be one of "+strings.Join(money.Currencies(), ", "))
		case !money.Supported(in.ToCurrency):
			return field.Invalid("toCurrency", "must be one of "+strings.Join(money.Currencies(), ", "))
		case in.FromCurrency == in.ToCurrency:
			return field.Invalid("toCurrency", "must differ from fromCurrency")
		}
		amount, err := money.ParseAmount(in.Amount, in.FromCurrency)
		if err != nil {
			return field.Invalid("amount", err.Error())
		}
		cid, err := httpapi.Company(r)
		if err != nil {
			return err
		}
		q, err := svc.Quote(r.Context(), cid, in.FromCurrency, in.ToCurrency, amount)
		if err != nil {
			return err
		}
		from, to := in.FromCurrency, in.ToCurrency
		httpapi.Respond(w, http.StatusOK, "Conversion calculated successfully", convertResponse{
			ExchangeRateID: q.Rate.ID, FromCurrency: from, ToCurrency: to, Rate: json.Number(q.Rate.Value.String()),
			Amount: money.JSON(q.Amount, from), ConvertedAmount: money.JSON(q.Converted, to),
			FeeAmount: money.JSON(q.Fee, q.FeeCurrency), FeeCurrency: q.FeeCurrency, TotalAmount: money.JSON(q.Total, from),
			NetAmount: money.JSON(q.Net, to), UpdatedAt: timestamp.Format(q.Rate.UpdatedAt),
		})
		return nil
	})
}
