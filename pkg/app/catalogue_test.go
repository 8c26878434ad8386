package app_test

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"payments/pkg/app"
	"payments/pkg/audit/audithttp"
	"payments/pkg/auth/authhttp"
	"payments/pkg/bulk/bulkhttp"
	"payments/pkg/cards/cardshttp"
	"payments/pkg/companies/companieshttp"
	"payments/pkg/customers/customershttp"
	"payments/pkg/debts/debtshttp"
	"payments/pkg/fees/feeshttp"
	"payments/pkg/function"
	"payments/pkg/fx/fxhttp"
	"payments/pkg/httpapi"
	"payments/pkg/idempotency/idempotencyhttp"
	"payments/pkg/issuerhooks/issuerhookshttp"
	"payments/pkg/limits/limitshttp"
	"payments/pkg/operatorhooks/operatorhookshttp"
	"payments/pkg/payments/paymentshttp"
	"payments/pkg/reconcile/reconcilehttp"
	"payments/pkg/wallets/walletshttp"
	"payments/pkg/webhooks/webhookshttp"
)

// answers maps each package whose errors a route may answer with to the
// catalogue that holds its rows (a domain's HTTP package's Errors).
var answers = map[string]httpapi.Catalogue{
	"payments/pkg/audit":              audithttp.Errors,
	"payments/pkg/auth":               authhttp.Errors,
	"payments/pkg/bulk":               bulkhttp.Errors,
	"payments/pkg/cards":              cardshttp.Errors,
	"payments/pkg/companies":          companieshttp.Errors,
	"payments/pkg/customers":          customershttp.Errors,
	"payments/pkg/debts":              debtshttp.Errors,
	"payments/pkg/events":             webhookshttp.Errors,
	"payments/pkg/fees":               feeshttp.Errors,
	"payments/pkg/fx":                 fxhttp.Errors,
	"payments/pkg/idempotency":        idempotencyhttp.Errors,
	"payments/pkg/issuerhooks":        issuerhookshttp.Errors,
	"payments/pkg/limits":             limitshttp.Errors,
	"payments/pkg/providers/operator": operatorhookshttp.Errors,
	"payments/pkg/payments":           paymentshttp.Errors,
	"payments/pkg/reconcile":          reconcilehttp.Errors,
	"payments/pkg/wallets":            walletshttp.Errors,
	"payments/pkg/webhooks":           webhookshttp.Errors,
}

// TestCataloguesCoverWhatTheFunctionsLink reads each HTTP function's
// dependencies (go list) and fails unless its catalogue (its Errors in
// app.HTTPFunctions) answers every error of every package it links as that
// package's catalogue does, with function.CommonErrors last: an error of a
// linked package that its catalogue left out would be a 500.
func TestCataloguesCoverWhatTheFunctionsLink(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "payments/functions/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	seen := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		name := strings.TrimPrefix(fields[0], "payments/functions/")
		fn, ok := app.HTTPFunctions[name]
		if !ok {
			continue
		}
		seen++
		c := fn.Errors
		if len(c) == 0 {
			t.Errorf("functions/%s: an HTTP function without a catalogue", name)
			continue
		}
		for _, dep := range fields[1:] {
			for _, row := range answers[dep] {
				if err := answered(c, row); err != nil {
					t.Errorf("functions/%s links %s: %v", name, dep, err)
				}
			}
		}
		if n, m := len(c), len(function.CommonErrors); n < m || fmt.Sprint(c[n-m:]) != fmt.Sprint(function.CommonErrors) {
			t.Errorf("functions/%s: its catalogue does not end with function.CommonErrors", name)
		}
	}
	if seen != len(app.HTTPFunctions) {
		t.Errorf("go list found %d HTTP functions, app.HTTPFunctions has %d", seen, len(app.HTTPFunctions))
	}
}

// answered reports whether c answers row's error as row does.
func answered(c httpapi.Catalogue, row httpapi.ErrorEntry) error {
	err := row.Err
	if err == nil {
		return nil
	}
	got, known := c.Body(err)
	want, _ := httpapi.Catalogue{row}.Body(err)
	if !known || got.StatusCode != want.StatusCode || got.Code != want.Code || got.Message != want.Message {
		return fmt.Errorf("%v answered %d %s, want %d %s", err, got.StatusCode, got.Code, want.StatusCode, want.Code)
	}
	return nil
}

// TestAnswersHoldEveryCatalogue: every row of every function's catalogue is
// a row of a package's catalogue in answers (or function.CommonErrors), so
// that the test above sees them all.
func TestAnswersHoldEveryCatalogue(t *testing.T) {
	for name, fn := range app.HTTPFunctions {
		for _, row := range fn.Errors {
			found := false
			for _, part := range append([]httpapi.Catalogue{function.CommonErrors}, mapValues(answers)...) {
				for _, r := range part {
					found = found || (r.Err != nil && errors.Is(r.Err, row.Err) && r.Code == row.Code) || (r.Err == nil && row.Err == nil && r.Code == row.Code)
				}
			}
			if !found {
				t.Errorf("functions/%s answers %s, a row of no catalogue in answers", name, row.Code)
			}
		}
	}
}

func mapValues(m map[string]httpapi.Catalogue) []httpapi.Catalogue {
	var all []httpapi.Catalogue
	for _, c := range m { // the order does not matter: each row is looked for in all
		all = append(all, c)
	}
	return all
}
