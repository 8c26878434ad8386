// Package reconcile proves that our ledger follows the providers, whose
// money is the truth: the card issuer (issuer.Statements: Stripe Issuing,
// or the sandbox network's log) and the mobile-money operator
// (operator.Records: pawaPay, or the sandbox operator).
//
// A run reconciles one provider over a window: since the end of the
// provider's last completed run (the first run: FirstWindow back) to now,
// less Grace for the issuer's hourly run (a notification on its way is not
// raced; the console's run ends now) and OperatorLag for the operator (a
// payment is checked once it had the time to be final). For the issuer it lists the authorizations and the
// transactions the issuer made, applies through the cards' Applier what we
// did not record (how missed notifications are recovered: an approval
// made without us, a settlement, a refund, a hold the issuer released),
// then compares: every transaction matched by one card transaction of the
// same amount, every authorization the issuer holds matched by an open
// hold of the same amount and the other way round, and the issuer's
// balance at least the sum of the cards' balances. For the operator it asks
// the operator about every payment of ours created in the window that may
// have reached it (a status check each), and reads its wallets' balances.
// What cannot be followed is a Mismatch: kept in the run's Report, logged
// at error level and counted (ReconciliationMismatches, which an alarm
// watches).
//
// A run ends within its context's deadline: one that runs out of time
// keeps its Report RUNNING with where it stopped (Progress), and the next
// sweep, or POST /admin/reconciliations, continues it from there; one that
// fails (a provider or the table cannot answer) ends FAILED with what it
// did, and the next run takes its window again. docs/reconciliation.md.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"time"

	"payments/pkg/field"
	"payments/pkg/page"
)

// Provider names what a run reconciles.
type Provider string

// The providers reconciled.
const (
	// Issuer is the card issuer (Stripe Issuing, or the sandbox network).
	Issuer Provider = "issuer"
	// Operator is the mobile-money operator (pawaPay, or the sandbox
	// operator).
	Operator Provider = "operator"
)

// Providers are every provider, in the order a run of both takes them.
var Providers = []Provider{Issuer, Operator}

// ParseProvider reads a provider's name; "" is every provider (nil).
func ParseProvider(s string) ([]Provider, error) {
	switch Provider(s) {
	case "":
		return Providers, nil
	case Issuer, Operator:
		return []Provider{Provider(s)}, nil
	}
	return nil, field.Invalid("provider", fmt.Sprintf("must be %q or %q, or left out for both", Issuer, Operator))
}

// Status is where a run stands.
type Status string

// Run statuses.
const (
	// Running is a run under way, or one that ran out of time and is
	// continued by the next.
	Running Status = "RUNNING"
	// Completed is a run that went through its whole window.
	Completed Status = "COMPLETED"
	// Failed is a run a provider or the table stopped (Report.Error): the
	// next run takes its window again.
	Failed Status = "FAILED"
)

// Kind is what a mismatch found.
type Kind string

// Mismatch kinds.
const (
	// KindMissing is a movement one side has and the other does not, which
	// could not be applied: the issuer's transaction or held authorization
	// we do not have, our hold the issuer has no authorization for, our
	// payment the operator has no record of.
	KindMissing Kind = "missing"
	// KindAmount is a movement both have, of different amounts (a hold: the
	// issuer holding more than we do).
	KindAmount Kind = "amount"
	// KindStatus is a movement whose outcome differs: the issuer moved money
	// we refused, or holds what we released; a payment final at the
	// operator and not here, or the other way round.
	KindStatus Kind = "status"
	// KindBalance is the issuer's balance below the sum of the cards'
	// balances: the cards are promised more than the issuer holds.
	KindBalance Kind = "balance"
	// KindUnverified is a payment, or a balance, the provider could not say
	// anything about when asked: it was not reconciled.
	KindUnverified Kind = "unverified"
)

// Subjects of a mismatch: what it is about.
const (
	SubjectTransaction   = "transaction"   // the issuer's settlement or refund
	SubjectAuthorization = "authorization" // the issuer's authorization
	SubjectHold          = "hold"          // our open hold
	SubjectPayment       = "payment"       // our payout or collection
	SubjectBalance       = "balance"       // the provider's balance
)

// Mismatch is one thing the run could not follow, with the ids that find
// both sides' records.
type Mismatch struct {
	Kind    Kind
	Subject string
	// ProviderID is the provider's id (Stripe's ipi_… or iauth_…, the
	// network's ntx_…, the operator's order id).
	ProviderID string
	// CompanyID, Reference (our card or payment id) and TransactionID
	// (our card transaction) find our record, when we have one.
	CompanyID, Reference, TransactionID string
	// Currency, ProviderAmount and OurAmount (minor units) are the amounts
	// compared, when they were.
	Currency                  string
	ProviderAmount, OurAmount *int64
	// ProviderStatus and OurStatus are the statuses compared, when they
	// were.
	ProviderStatus, OurStatus string
	// Detail says what was found, and what applying it answered.
	Detail string
}

// Balance is a provider's balance in one currency (one wallet of the
// operator's), with the sum of ours it must cover where there is one.
type Balance struct {
	Country  string
	Currency string
	// Provider is the provider's balance; Ours, when set, the sum of our
	// balances it covers (the cards' balances), in minor units.
	Provider int64
	Ours     *int64
}

// Window is what a run reconciles: the provider's records created from
// From (inclusive) to To (exclusive).
type Window struct {
	From, To time.Time
}

// Report is a run and what it found.
type Report struct {
	// ID is a UUID v7 of StartedAt, so reports sort by time.
	ID       string
	Provider Provider
	Status   Status
	Window   Window
	// Matched counts what both sides have alike; Recovered what the run
	// applied of the provider's records that we had missed.
	Matched, Recovered int
	// Mismatches are the first MaxKeptMismatches found; MismatchCount
	// counts them all (each is logged at error level).
	Mismatches    []Mismatch
	MismatchCount int
	// Balances are the provider's balances, read at the end of the run.
	Balances []Balance
	// Error says why a FAILED run stopped.
	Error      string
	StartedAt  time.Time
	UpdatedAt  time.Time
	FinishedAt *time.Time
	// Progress is where a RUNNING run stands.
	Progress Progress
	// Lease names the invocation running it, until LeaseUntil: another
	// takes it over only after (a run whose invocation ended).
	Lease      string
	LeaseUntil time.Time
}

// Progress is where a run stands: its phase and, within it, the last item
// done (the id of the provider's record, or of our payment).
type Progress struct {
	Phase string
	After string
	// Since is where the issuer's authorizations are listed from: the
	// window's start, or the creation of the oldest hold we keep open if
	// earlier.
	Since time.Time
	// Unseen are our open holds the issuer's list has not named yet, and
	// Deferred the holds the issuer released, or holds less of, which are
	// released once the transactions are applied (a capture releases
	// them first): each a hold reference (holdRef).
	Unseen   []string
	Deferred []string
}

// MaxKeptMismatches bounds the mismatches a report keeps; those past it
// are counted (MismatchCount), logged and measured all the same.
const MaxKeptMismatches = 100

// State is what is known of a provider's runs.
type State struct {
	// Latest is the id of its latest run, "" before the first; LatestAt
	// when that run started.
	Latest   string
	LatestAt time.Time
	// CompletedTo is the end of the window of its last completed run:
	// where the next run starts; zero before the first.
	CompletedTo time.Time
}

// Errors of the reconciliation.
var (
	// ErrNotFound is a report that does not exist.
	ErrNotFound = errors.New("reconcile: no such reconciliation")
	// ErrRunning is a run asked for while another of the provider runs.
	ErrRunning = errors.New("reconcile: a reconciliation of the provider is running")
	// ErrNotReconciled is a provider this deployment cannot reconcile: it
	// has none configured, or one whose records cannot be listed.
	ErrNotReconciled = errors.New("reconcile: the provider's records cannot be read here")
	// ErrBusy is a write of a run another invocation holds (or a start
	// another won); the store's answer.
	ErrBusy = errors.New("reconcile: another invocation holds the run")
)

// Store keeps the reports, and each provider's state.
type Store interface {
	// State reads the provider's state.
	State(ctx context.Context, p Provider) (State, error)
	// Start writes r, a new run, as the provider's latest, on the
	// condition that its latest is still prev ("" for none): ErrBusy
	// otherwise.
	Start(ctx context.Context, r Report, prev string) error
	// Take leases run id to lease until until, on the condition that it is
	// RUNNING and its lease ended before now (ErrBusy otherwise), and
	// returns it.
	Take(ctx context.Context, id, lease string, until, now time.Time) (Report, error)
	// Save writes r, on the condition that r.Lease still holds it
	// (ErrBusy otherwise); a COMPLETED r also makes r.Window.To the
	// provider's CompletedTo.
	Save(ctx context.Context, r Report) error
	// Get reads report id; ErrNotFound if none.
	Get(ctx context.Context, id string) (Report, error)
	// List reads page p of the reports, newest first.
	List(ctx context.Context, p page.Request) (page.Result[Report], error)
}
