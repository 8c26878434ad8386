// Package feeshttp is the HTTP layer of pkg/fees: its routes, which read the
// request, call the service and answer, and the wire types its answers are
// made of, converted from the domain's.
package feeshttp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"payments/pkg/countries"
	"payments/pkg/fees"
	"payments/pkg/field"
	"payments/pkg/httpapi"
	"payments/pkg/money"
)

// ruleJSON is a rule as the operator console reads it: fixed in major units
// of the rule's currency, percent as a decimal number.
type ruleJSON struct {
	Type     string      `json:"type"`
	Operator string      `json:"operator,omitempty"`
	Country  string      `json:"country,omitempty"`
	Currency string      `json:"currency,omitempty"`
	Fixed    json.Number `json:"fixed"`
	Percent  json.Number `json:"percent"`
}

type scheduleJSON struct {
	Rules   []ruleJSON `json:"rules"`
	Default bool       `json:"default"`
}

// ruleRequest is a rule as the operator console writes it. fixed and
// percent are kept raw so that only JSON numbers are accepted.
type ruleRequest struct {
	Type     string          `json:"type"`
	Operator string          `json:"operator"`
	Country  string          `json:"country"`
	Currency string          `json:"currency"`
	Fixed    json.RawMessage `json:"fixed"`
	Percent  json.RawMessage `json:"percent"`
}

func toJSON(s fees.Schedule) scheduleJSON {
	out := scheduleJSON{Default: s.Default, Rules: []ruleJSON{}}
	for _, r := range s.Rules {
		out.Rules = append(out.Rules, ruleJSON{
			Type: r.Type, Operator: r.Operator, Country: r.Country, Currency: r.Currency,
			Fixed: money.JSON(r.Fixed, r.Currency), Percent: json.Number(fees.FormatPercent(r.PercentBps)),
		})
	}
	return out
}

// fromJSON reads the rules of a PUT. fixed is an amount of the rule's
// currency from 0 to 10^12 (a non-zero fixed part needs the currency);
// percent is from 0 to 100 with at most two decimals. Both are JSON
// numbers, absent or null meaning 0.
func fromJSON(rules []ruleRequest) (fees.Schedule, error) {
	if rules == nil {
		return fees.Schedule{}, field.Invalid("rules", "is required")
	}
	s := fees.Schedule{Rules: make([]fees.Rule, 0, len(rules))}
	for i, rj := range rules {
		at := func(name string) string { return fmt.Sprintf("rules[%d].%s", i, name) }
		r := fees.Rule{Type: rj.Type, Operator: rj.Operator, Country: rj.Country, Currency: rj.Currency}
		var err error
		if r.Fixed, err = parseFixed(rj.Fixed, r.Currency, at); err != nil {
			return fees.Schedule{}, err
		}
		text, err := money.Number(rj.Percent)
		if err != nil {
			return fees.Schedule{}, field.Invalid(at("percent"), err.Error())
		}
		if text != "" {
			if r.PercentBps, err = fees.ParsePercent(text); err != nil {
				return fees.Schedule{}, field.Invalid(at("percent"), err.Error())
			}
		}
		s.Rules = append(s.Rules, r)
	}
	return s, s.Validate()
}

// parseFixed reads a rule's fixed part in minor units of currency; its
// errors name at("fixed") or at("currency").
func parseFixed(raw json.RawMessage, currency string, at func(string) string) (int64, error) {
	text, err := money.Number(raw)
	if err != nil {
		return 0, field.Invalid(at("fixed"), err.Error())
	}
	if text == "" {
		return 0, nil
	}
	if currency == "" {
		if n, err := money.ParseDecimal(text, 0); err == nil && n == 0 {
			return 0, nil
		}
		return 0, field.Invalid(at("currency"), "is required with a fixed fee")
	}
	if !money.Supported(currency) {
		return 0, field.Invalid(at("currency"), "is not a supported currency")
	}
	n, err := money.ParseMajor(text, currency)
	if err != nil {
		return 0, field.Invalid(at("fixed"), err.Error())
	}
	if n < 0 {
		return 0, field.Invalid(at("fixed"), "must be at least 0")
	}
	return n, nil
}

// Companies confirms that a company exists, returning an error that wraps
// its not-found sentinel otherwise, so the console answers 404 for an
// unknown company.
type Companies interface {
	Check(ctx context.Context, companyID string) error
}

// AdminRoutes registers the operator console's fee routes:
// GET and PUT /admin/companies/{id}/fees.
func AdminRoutes(rt *httpapi.Router, svc *fees.Service, companies Companies) {
	rt.Handle("GET /admin/companies/{id}/fees", func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		if err := companies.Check(r.Context(), id); err != nil {
			return err
		}
		sch, err := svc.Schedule(r.Context(), id)
		if err != nil {
			return err
		}
		httpapi.Respond(w, http.StatusOK, "Fee schedule retrieved successfully", toJSON(sch))
		return nil
	})
	rt.Handle("PUT /admin/companies/{id}/fees", func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue("id")
		var in struct {
			Rules []ruleRequest `json:"rules"`
		}
		if err := httpapi.Decode(r, &in); err != nil {
			return err
		}
		sch, err := fromJSON(in.Rules)
		if err != nil {
			return err
		}
		if err := companies.Check(r.Context(), id); err != nil {
			return err
		}
		if err := svc.SetSchedule(r.Context(), id, sch); err != nil {
			return err
		}
		httpapi.Respond(w, http.StatusOK, "Fee schedule updated successfully", toJSON(sch))
		return nil
	})
}

// Availability tells whether an operator serves a country and currency (the
// payment guideline).
type Availability interface {
	Supports(country, currency, operator string) bool
}

// quotedTypes are the fee types POST /wallets/calculate-transfer-fees
// prices.
var quotedTypes = []string{fees.TypePayout, fees.TypeCollection, fees.TypeConversion, fees.TypeTransfer}

// paymentType reports whether typ prices a payment to or from a mobile
// money account, which has an operator and a country.
func paymentType(typ string) bool { return typ == fees.TypePayout || typ == fees.TypeCollection }

// quoteRequest is the body of POST /wallets/calculate-transfer-fees.
type quoteRequest struct {
	Type     string          `json:"type"`
	Operator string          `json:"operator"`
	Country  string          `json:"country"`
	Currency string          `json:"currency"`
	Amount   json.RawMessage `json:"amount"`
}

// QuoteResponse is the answer of POST /wallets/calculate-transfer-fees.
type QuoteResponse struct {
	Type        string      `json:"type"`
	Operator    string      `json:"operator"`
	Country     string      `json:"country"`
	Currency    string      `json:"currency"`
	Amount      json.Number `json:"amount"`
	FeeAmount   json.Number `json:"fee_amount"`
	TotalAmount json.Number `json:"total_amount"`
	Fee         struct {
		Fixed   json.Number `json:"fixed"`
		Percent json.Number `json:"percent"`
	} `json:"fee"`
}

// Routes registers POST /wallets/calculate-transfer-fees, which prices a
// prospective payout (or collection) without moving money.
func Routes(rt *httpapi.Router, svc *fees.Service, guide Availability) {
	rt.Handle("POST /wallets/calculate-transfer-fees", func(w http.ResponseWriter, r *http.Request) error {
		var in quoteRequest
		if err := httpapi.Decode(r, &in); err != nil {
			return err
		}
		if in.Type == "" {
			in.Type = fees.TypePayout
		}
		amount, err := validateQuote(in)
		if err != nil {
			return err
		}
		if paymentType(in.Type) && !guide.Supports(in.Country, in.Currency, in.Operator) {
			return fees.ErrOperatorUnavailable
		}
		cid, err := httpapi.Company(r)
		if err != nil {
			return err
		}
		q, err := svc.Quote(r.Context(), cid, in.Type, in.Operator, in.Country, in.Currency, amount)
		if err != nil {
			return err
		}
		out := QuoteResponse{
			Type: in.Type, Operator: in.Operator, Country: in.Country, Currency: in.Currency,
			Amount:      money.JSON(q.Amount, in.Currency),
			FeeAmount:   money.JSON(q.Fee, in.Currency),
			TotalAmount: money.JSON(q.Total(), in.Currency),
		}
		out.Fee.Fixed = money.JSON(q.Rule.Fixed, in.Currency)
		out.Fee.Percent = json.Number(fees.FormatPercent(q.Rule.PercentBps))
		httpapi.Respond(w, http.StatusOK, "Fees calculated successfully", out)
		return nil
	})
}

func validateQuote(in quoteRequest) (int64, error) {
	switch {
	case !slices.Contains(quotedTypes, in.Type):
		return 0, field.Invalid("type", "must be one of "+strings.Join(quotedTypes, ", "))
	// A conversion or a transfer between a company's wallets has no
	// operator or country: only its currency prices it.
	case !paymentType(in.Type) && in.Operator != "":
		return 0, field.Invalid("operator", "is not taken for "+in.Type)
	case !paymentType(in.Type) && in.Country != "":
		return 0, field.Invalid("country", "is not taken for "+in.Type)
	case !paymentType(in.Type):
	case in.Operator == "":
		return 0, field.Invalid("operator", "is required")
	case !slices.Contains(fees.Operators, in.Operator):
		return 0, field.Invalid("operator", "must be one of "+strings.Join(fees.Operators, ", "))
	case !countries.IsAlpha2(in.Country):
		return 0, field.Invalid("country", countries.Alpha2Rule)
	}
	if !money.Supported(in.Currency) {
		return 0, field.Invalid("currency", "must be one of "+strings.Join(money.Currencies(), ", "))
	}
	amount, err := money.ParseAmount(in.Amount, in.Currency)
	if err != nil {
		return 0, field.Invalid("amount", err.Error())
	}
	return amount, nil
}
