package e2e_test

import (
	"testing"

	"payments/pkg/function"
)

// The fuzz targets send arbitrary bodies to every route that reads JSON, and
// arbitrary query strings to every list, through the handlers the functions
// run, against the local stack. Whatever the input, the answer must not be a
// 5xx or a failed invocation, and no handler may panic; a 400 for a field
// must name it (see check). `go test` runs the seeds under
// testdata/fuzz/<target>/, the inputs that once made a 5xx, a panic or a
// wrong value; `make fuzz` runs each target for FUZZTIME.

// keySeeds adds body to f twice over, as the seeds of a route: with key
// given twice in its object and with key in upper case (the decoder refuses
// both, naming the key; see keyVariants).
func keySeeds(f *testing.F, body, key string) {
	twice, upper := keyVariants(body, key)
	f.Add(twice)
	f.Add(upper)
}

// fuzzBody fuzzes the body of one route; the path may depend on the
// environment (a company or wallet id).
func fuzzBody(f *testing.F, method string, route func(*inputEnv) (function.HTTPHandler, string)) {
	f.Add("null") // decodes into an object without an error: a 400 all the same
	e := newInputEnv(f)
	h, path := route(e)
	f.Fuzz(func(t *testing.T, body string) {
		check(t, h, e.event(method, path, body))
	})
}

// FuzzAuthToken fuzzes the body of POST /auth/token.
func FuzzAuthToken(f *testing.F) {
	keySeeds(f, `{"client_id":"c","client_key":"sk_x"}`, "client_id")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.auth, "/auth/token" })
}

// FuzzCreateWallet fuzzes the body of POST /wallets.
func FuzzCreateWallet(f *testing.F) {
	keySeeds(f, `{"currency":"XOF","country":"Senegal","country_iso_code":"SN","country_phone_code":"+221"}`, "currency")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.wallets, "/wallets" })
}

// FuzzTransferFees fuzzes the body of POST /wallets/calculate-transfer-fees.
func FuzzTransferFees(f *testing.F) {
	keySeeds(f, `{"operator":"mtn","country":"CM","currency":"XAF","amount":1000}`, "amount")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.wallets, "/wallets/calculate-transfer-fees" })
}

// FuzzTransferInternal fuzzes the body of POST
// /wallets/{id}/transfer-internal.
func FuzzTransferInternal(f *testing.F) {
	f.Add(`{"amount":10,"from":"payout","to":"payin"}`)
	keySeeds(f, `{"amount":10,"from":"payout","to":"payin"}`, "amount")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) {
		return e.wallets, "/wallets/" + e.walletID + "/transfer-internal"
	})
}

// FuzzFundWallet fuzzes the body of POST /wallets/fund.
func FuzzFundWallet(f *testing.F) {
	f.Add(`{"wallet_id":"0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d","amount":100,"balance":"payin","reference":"wire-1"}`)
	keySeeds(f, `{"wallet_id":"0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d","amount":100,"balance":"payin","reference":"wire-1"}`, "amount")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.wallets, "/wallets/fund" })
}

// FuzzPayout fuzzes the body of POST /payment/payout.
func FuzzPayout(f *testing.F) {
	keySeeds(f, `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":1000,"currency":"XAF"}`, "amount")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.payments, "/payment/payout" })
}

// FuzzCollect fuzzes the body of POST /payment/collect.
func FuzzCollect(f *testing.F) {
	keySeeds(f, `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":1000,"currency":"XAF"}`, "amount")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.payments, "/payment/collect" })
}

// FuzzBulkPayout fuzzes the JSON body of POST /payment/payouts/bulk.
func FuzzBulkPayout(f *testing.F) {
	keySeeds(f, `{"mode":"partial","items":[{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":10,"currency":"XAF"}]}`, "items")
	f.Add(`{"items":[{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":"10","currency":"XAF","PHONE_NUMBER":"1"}]}`)
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.payments, "/payment/payouts/bulk" })
}

// FuzzBulkPayoutCSV fuzzes the CSV body of POST /payment/payouts/bulk.
func FuzzBulkPayoutCSV(f *testing.F) {
	f.Add("operator,country,phone_number,amount,currency\nmtn,CM,237670000001,10,XAF\n")
	f.Add("\ufeffoperator,country,phone_number,amount,currency,,\nmtn,CM,237670000001,1e3,XAF\n")
	f.Add("operator,country,phone_number,amount,currency\n\"mtn,CM,1\n")
	e := newInputEnv(f)
	f.Fuzz(func(t *testing.T, body string) {
		ev := e.event("POST", "/payment/payouts/bulk?mode=partial", body)
		ev.Headers["content-type"] = "text/csv"
		check(t, e.payments, ev)
	})
}

// FuzzEnrollCustomer fuzzes the body of POST /customers/enroll.
func FuzzEnrollCustomer(f *testing.F) {
	f.Add(`{"first_name":"Amina","last_name":"Njoya","email":"a@example.com","country":"Cameroon","street":"1 Rue","city":"Douala",` +
		`"state":"Littoral","postal_code":"00237","country_iso_code":"CM","country_phone_code":"+237","phone_number":"670000001",` +
		`"identification_number":"X1","id_document_type":"NIN","date_of_birth":"1990-04-12",` +
		`"id_document_front_url":"https://127.0.0.1/f.png","id_document_back_url":"https://127.0.0.1/b.pdf"}`)
	keySeeds(f, `{"first_name":"Amina","last_name":"Njoya","email":"a@example.com"}`, "email")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.customers, "/customers/enroll" })
}

// FuzzUploadCustomer fuzzes the multipart body of POST /customers, whose
// boundary is "b".
func FuzzUploadCustomer(f *testing.F) {
	e := newInputEnv(f)
	f.Add("--b\r\nContent-Disposition: form-data; name=\"email\"\r\n\r\na@example.com\r\n--b--\r\n")
	f.Add("--b\r\nContent-Disposition: form-data; name=\"id_document_front\"; filename=\"f\"\r\n\r\n\x89PNG\r\n--b--")
	f.Fuzz(func(t *testing.T, body string) {
		ev := e.event("POST", "/customers", body)
		ev.Headers["content-type"] = "multipart/form-data; boundary=b"
		check(t, e.customers, ev)
	})
}

// FuzzIssueCard fuzzes the body of POST /cards.
func FuzzIssueCard(f *testing.F) {
	f.Add(`{"customer_id":"0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d","brand":"visa","amount":25}`)
	keySeeds(f, `{"customer_id":"0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d","brand":"visa","amount":25}`, "amount")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.cards, "/cards" })
}

// FuzzMoveCard fuzzes the body of POST /cards/{id}/fund (the withdrawal
// reads the same body).
func FuzzMoveCard(f *testing.F) {
	f.Add(`{"amount":10}`)
	keySeeds(f, `{"amount":10}`, "amount")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.cards, "/cards/" + e.walletID + "/fund" })
}

// FuzzCardNetworkAuthorization fuzzes the body of POST
// /sandbox/cards/{id}/authorizations.
func FuzzCardNetworkAuthorization(f *testing.F) {
	f.Add(`{"amount":12.5,"merchant_name":"Book Shop","merchant_city":"Lyon","merchant_country":"FR","type":"PREAUTHORIZATION"}`)
	f.Add(`{"merchant_name":"Hotel","merchant_city":"Kribi","type":"verification"}`)
	keySeeds(f, `{"amount":12.5,"merchant_name":"Book Shop","merchant_city":"Lyon"}`, "amount")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) {
		return e.network, "/sandbox/cards/" + e.walletID + "/authorizations"
	})
}

// FuzzCardNetworkFollow fuzzes the body of POST
// /sandbox/card-transactions/{transactionId}/settle (the refund reads the
// same body).
func FuzzCardNetworkFollow(f *testing.F) {
	f.Add(`{"amount":10}`)
	f.Add(``)
	keySeeds(f, `{"amount":10}`, "amount")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) {
		return e.network, "/sandbox/card-transactions/" + e.walletID + "/settle"
	})
}

// FuzzConvertQuote fuzzes the body of POST /company/exchange-rates/convert.
func FuzzConvertQuote(f *testing.F) {
	f.Add(`{"fromCurrency":"XAF","toCurrency":"USD","amount":333}`)
	f.Add(`{"FROMCURRENCY":"XAF","ToCurrency":"USD","AMOUNT":5000}`)
	keySeeds(f, `{"fromCurrency":"XAF","toCurrency":"USD","amount":333}`, "amount")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.wallets, "/company/exchange-rates/convert" })
}

// FuzzConversion fuzzes the body of POST
// /partner/wallets/xaf-usd-conversion (the preview reads the same body).
func FuzzConversion(f *testing.F) {
	f.Add(`{"source_wallet_id":"0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d","amount":1000,"exchangeRateId":"0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2e"}`)
	keySeeds(f, `{"source_wallet_id":"0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d","amount":1000}`, "amount")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) {
		return e.wallets, "/partner/wallets/xaf-usd-conversion"
	})
}

// FuzzDeposit fuzzes the body of POST /wallets/deposit.
func FuzzDeposit(f *testing.F) {
	f.Add(`{"sourceWallet":{"id":"0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d","amount":1000},"destinationWallet":{"id":"0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2f"},` +
		`"exchangeRate":{"exchangeRateId":"0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2e"}}`)
	keySeeds(f, `{"sourceWallet":{"id":"0196c1d2-3e4f-7a5b-8c6d-7e8f9a0b1c2d","amount":1000},"exchangeRate":{"exchangeRateId":"r"}}`, "amount")
	keySeeds(f, `{"exchangeRate":{"exchangeRateId":"r"},"sourceWallet":{"amount":1000}}`, "exchangeRateId")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.wallets, "/wallets/deposit" })
}

// FuzzPutExchangeRates fuzzes the body of PUT
// /admin/companies/{id}/exchange-rates.
func FuzzPutExchangeRates(f *testing.F) {
	f.Add(`{"rates":[{"from_currency":"XAF","to_currency":"USD","rate":0.0016}]}`)
	f.Add(`{"rates":[{"from_currency":"USD","to_currency":"XAF","rate":6.55957e2}]}`)
	keySeeds(f, `{"rates":[{"from_currency":"XAF","to_currency":"USD","rate":0.0016}]}`, "rate")
	fuzzBody(f, "PUT", func(e *inputEnv) (function.HTTPHandler, string) {
		return e.admin, "/admin/companies/" + e.companyID + "/exchange-rates"
	})
}

// FuzzCreateCompany fuzzes the body of POST /admin/companies.
func FuzzCreateCompany(f *testing.F) {
	keySeeds(f, `{"name":"Acme","kyb_status":"APPROVED"}`, "name")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.admin, "/admin/companies" })
}

// FuzzPatchCompany fuzzes the body of PATCH /admin/companies/{id}.
func FuzzPatchCompany(f *testing.F) {
	keySeeds(f, `{"is_active":true,"card_slots":5}`, "is_active")
	fuzzBody(f, "PATCH", func(e *inputEnv) (function.HTTPHandler, string) { return e.admin, "/admin/companies/" + e.companyID })
}

// FuzzCredit fuzzes the body of POST /admin/wallets/{walletId}/credit.
func FuzzCredit(f *testing.F) {
	keySeeds(f, `{"balance":"payin","amount":1000,"reference":"r-1"}`, "amount")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) {
		return e.admin, "/admin/wallets/" + e.walletID + "/credit"
	})
}

// FuzzPutFees fuzzes the body of PUT /admin/companies/{id}/fees.
func FuzzPutFees(f *testing.F) {
	keySeeds(f, `{"rules":[{"type":"PAYOUT","currency":"XAF","percent":1}]}`, "percent")
	fuzzBody(f, "PUT", func(e *inputEnv) (function.HTTPHandler, string) {
		return e.admin, "/admin/companies/" + e.companyID + "/fees"
	})
}

// FuzzResolvePayment fuzzes the body of POST
// /admin/payments/{transactionId}/resolve.
func FuzzResolvePayment(f *testing.F) {
	keySeeds(f, `{"status":"FAILED","note":"statement"}`, "status")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) {
		return e.admin, "/admin/payments/" + e.paymentID + "/resolve"
	})
}

// FuzzDecideKYC fuzzes the body of POST /admin/customers/{id}/kyc (of a
// customer that does not exist: the body is checked first).
func FuzzDecideKYC(f *testing.F) {
	keySeeds(f, `{"status":"REJECTED","reason":"expired passport"}`, "status")
	f.Add(`{"status":"REJECTED","reason":"\u0000"}`)
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) {
		return e.admin, "/admin/customers/" + e.walletID + "/kyc"
	})
}

// FuzzTerminateCard fuzzes the optional body of POST /cards/{id}/terminate
// (the sandbox network's termination reads the same body).
func FuzzTerminateCard(f *testing.F) {
	f.Add(``)
	keySeeds(f, `{"reason":"lost"}`, "reason")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) {
		return e.cards, "/cards/" + e.walletID + "/terminate"
	})
}

// FuzzListQuery sends each query string to every GET of the document that
// takes query parameters (listTargets): every list, the status and card
// routes.
func FuzzListQuery(f *testing.F) {
	e := newInputEnv(f)
	targets := e.listTargets(f)
	f.Fuzz(func(t *testing.T, query string) {
		for _, l := range targets {
			check(t, l.h, e.event("GET", l.path+"?"+query, ""))
		}
	})
}

// FuzzCreateWebhookEndpoint fuzzes the body of POST /webhooks/endpoints.
func FuzzCreateWebhookEndpoint(f *testing.F) {
	keySeeds(f, `{"url":"https://hooks.example.com/in","enabled_events":["card.fund"],"description":"d"}`, "url")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) { return e.webhooks, "/webhooks/endpoints" })
}

// FuzzPatchWebhookEndpoint fuzzes the body of PATCH
// /webhooks/endpoints/{id}.
func FuzzPatchWebhookEndpoint(f *testing.F) {
	keySeeds(f, `{"status":"disabled","enabled_events":["*"]}`, "status")
	fuzzBody(f, "PATCH", func(e *inputEnv) (function.HTTPHandler, string) {
		return e.webhooks, "/webhooks/endpoints/" + e.endpoint(f)
	})
}

// FuzzRotateWebhookSecret fuzzes the body of POST
// /webhooks/endpoints/{id}/rotate-secret.
func FuzzRotateWebhookSecret(f *testing.F) {
	keySeeds(f, `{"expire_previous_in_hours":24}`, "expire_previous_in_hours")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) {
		return e.webhooks, "/webhooks/endpoints/" + e.endpoint(f) + "/rotate-secret"
	})
}

// FuzzResendWebhookEvent fuzzes the body of POST
// /webhooks/events/{id}/resend, for the event of the set-up's payout.
func FuzzResendWebhookEvent(f *testing.F) {
	keySeeds(f, `{"endpoint_id":"0196897a-5f0c-7d3e-9a41-1c2b3d4e5f60"}`, "endpoint_id")
	fuzzBody(f, "POST", func(e *inputEnv) (function.HTTPHandler, string) {
		var list struct {
			Data []struct{ ID string } `json:"data"`
		}
		e.mustDecode(f, e.mustCall(f, e.webhooks, "GET", "/webhooks/events?limit=1", "", 200), &list)
		if len(list.Data) == 0 {
			f.Fatal("the set-up's payout has no event")
		}
		return e.webhooks, "/webhooks/events/" + list.Data[0].ID + "/resend"
	})
}
