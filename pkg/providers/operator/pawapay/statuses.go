package pawapay

import (
	"fmt"

	"payments/pkg/providers/operator"
)

// outcome is what one pawaPay status means to us: a state, or no state at
// all (unknown: the caller asks again later) with the error saying why.
type outcome struct {
	state operator.State // "" when the status says nothing definitive
	err   error          // wraps operator.ErrUnavailable when state is ""
	ask   bool           // the first submission's state must be asked for
}

// statuses maps every pawaPay status of docs/providers.md to its outcome.
// Initiation answers ACCEPTED, REJECTED or DUPLICATE_IGNORED (v2 initiate
// payout and deposit pages); a status check or a callback answers the
// others: ENQUEUED, SUBMITTED (the v2 sandbox test numbers' payments that
// never finish), PROCESSING and IN_RECONCILIATION are not final (the
// dashboard's transaction statuses page: a payment in reconciliation is
// moved to its final status once reconciled), COMPLETED and FAILED are.
// FAILED and REJECTED take their reason from the failure code
// (failureReasons).
var statuses = map[string]outcome{
	"ACCEPTED":          {state: operator.Processing},
	"ENQUEUED":          {state: operator.Processing},
	"PROCESSING":        {state: operator.Processing},
	"IN_RECONCILIATION": {state: operator.Processing},
	"SUBMITTED":         {state: operator.Processing},
	"COMPLETED":         {state: operator.Succeeded},
	"FAILED":            {state: operator.Failed},
	"REJECTED":          {state: operator.Failed},
	"DUPLICATE_IGNORED": {ask: true},
}

// failureReasons maps each pawaPay failure code, of a failed payment or of
// a rejected initiation, to a reason a client understands. One row per
// code; docs/providers.md lists the same rows with the page that documents
// each, or marks it a defensive default.
var failureReasons = map[string]string{
	// A payment that failed at the provider (status FAILED).
	"PAYER_NOT_FOUND":                  "the payer's mobile money account was not found",
	"PAYMENT_NOT_APPROVED":             "the payer did not approve the payment",
	"INSUFFICIENT_BALANCE":             "the payer's balance is too low",
	"PAYMENT_IN_PROGRESS":              "the payer already has a payment in progress",
	"PAYER_LIMIT_REACHED":              "the payer has reached a limit of their account",
	"RECIPIENT_NOT_FOUND":              "recipient account not found",
	"RECIPIENT_NOT_ALLOWED_TO_RECEIVE": "the recipient's account cannot receive this payment",
	"WALLET_LIMIT_REACHED":             "the recipient's account has reached its limit",
	"PAWAPAY_WALLET_OUT_OF_FUNDS":      "the payout could not be funded at the operator",
	"MANUALLY_CANCELLED":               "the payment was cancelled by the aggregator",
	"UNSPECIFIED_FAILURE":              "the operator declined the payment without a reason",
	"UNKNOWN_ERROR":                    "the operator declined the payment",
	// An initiation pawaPay rejected (status REJECTED): answered 200, or
	// 400 for a malformed request, or 403 for an operation not enabled.
	"AMOUNT_OUT_OF_BOUNDS":             "the amount is outside the operator's limits",
	"INVALID_AMOUNT":                   "the amount is not valid for the operator",
	"INVALID_PHONE_NUMBER":             "the phone number is not valid for the operator",
	"INVALID_CURRENCY":                 "the currency is not served by the operator",
	"INVALID_PROVIDER":                 "the operator is not available for this country",
	"PROVIDER_TEMPORARILY_UNAVAILABLE": "the operator is temporarily unavailable",
	"DEPOSITS_NOT_ALLOWED":             "collections are not enabled with the operator",
	"PAYOUTS_NOT_ALLOWED":              "payouts are not enabled with the operator",
	"INVALID_INPUT":                    "the operator refused the request",
	"MISSING_PARAMETER":                "the operator refused the request",
	"UNSUPPORTED_PARAMETER":            "the operator refused the request",
	"INVALID_PARAMETER":                "the operator refused the request",
	"DUPLICATE_METADATA_FIELD":         "the operator refused the request",
}

// notAllowed are the failure codes pawaPay answers 403 with that still
// reject one request (the failure codes page: the operation is not enabled
// for the provider), unlike a 403 for the token or a signature.
var notAllowed = map[string]bool{"DEPOSITS_NOT_ALLOWED": true, "PAYOUTS_NOT_ALLOWED": true}

// unknownFailureReason is the reason of a failure whose code is not in
// failureReasons (a code pawaPay added since): still a definitive failure.
const unknownFailureReason = "the operator declined the payment"

// notServedReason is the reason of a request for an (operator, country)
// pawaPay does not serve: Submit answers Failed without calling pawaPay.
const notServedReason = "the operator is not available for this country"

// reasonOf returns the client's reason for a failure code.
func reasonOf(code string) string {
	if r, ok := failureReasons[code]; ok {
		return r
	}
	return unknownFailureReason
}

// interpret turns a pawaPay status and failure code into our outcome. An
// unknown status is an answer we cannot read: unknown, never Failed.
func interpret(status, failureCode string) (operator.State, string, outcome) {
	o, ok := statuses[status]
	if !ok {
		return "", "", outcome{err: fmt.Errorf("%w: pawapay: unknown status %q", operator.ErrUnavailable, status)}
	}
	if o.state == operator.Failed {
		return o.state, reasonOf(failureCode), o
	}
	return o.state, "", o
}
