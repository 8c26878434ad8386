package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"payments/pkg/deadline"
	"payments/pkg/field"
	"payments/pkg/ids"
	"payments/pkg/metrics"
	"payments/pkg/page"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/operator"
	"payments/pkg/timestamp"
)

// Defaults of a Service.
const (
	// DefaultFirstWindow is how far back a provider's first run starts
	// (RECONCILIATION_FIRST_WINDOW_HOURS).
	DefaultFirstWindow = 24 * time.Hour
	// DefaultEvery is how old a provider's latest run must be before the
	// sweeper starts the next: the job is hourly.
	DefaultEvery = time.Hour
	// Grace is how long before the sweeper's run the issuer's window ends:
	// what it reported in the last minutes may still be on its way to us.
	// A run the console asks for ends when it starts: the operator asks
	// for what the issuer has now (a notification on its way is applied
	// once whichever applies it first, by its claims).
	Grace = 10 * time.Minute
	// OperatorLag is how long after its creation a payment is checked: by
	// then the operator has had the time to make it final (the payments'
	// deadline is 15 minutes), so each is checked once, final.
	OperatorLag = time.Hour
)

// itemTime is the least time left to take one more item: its reads, an
// application of a few writes, and the checkpoint after.
const itemTime = 2 * time.Second

// leaseMargin is how long past its context's deadline a run stays leased
// (its last checkpoint still being written); leaseNoDeadline is the lease
// of a run whose context has none.
const (
	leaseMargin     = 30 * time.Second
	leaseNoDeadline = 15 * time.Minute
)

// pageSize is how many records a run reads at a time.
const pageSize = 50

// Applier applies one of the issuer's notifications to our cards, once per
// its claims (cards.Applier, cards.Service).
type Applier interface {
	Apply(ctx context.Context, n issuer.Notification) error
}

// Deps are what a Service is built from: the store of the reports and, for
// each provider reconciled, its records and our ledger of it. A provider
// whose records are nil is not reconciled (ErrNotReconciled).
type Deps struct {
	Store Store
	// Issuer is the card issuer's statements; Cards our cards' records,
	// Applier what applies what we missed.
	Issuer  issuer.Statements
	Cards   CardLedger
	Applier Applier
	// Operator is the operator's records; Payments our payments.
	Operator operator.Records
	Payments PaymentLedger
	// FirstWindow is how far back a provider's first run starts;
	// DefaultFirstWindow when 0.
	FirstWindow time.Duration
	// Every is the age of a provider's latest run past which RunDue starts
	// another; DefaultEvery when 0.
	Every time.Duration
	// Now is the clock (default time.Now); tests give one they move.
	Now func() time.Time
}

// Service runs the reconciliation and serves its reports.
type Service struct {
	Deps
}

// NewService returns the Service over d, or an error naming what d lacks:
// a Store, and for a provider reconciled our side of it.
func NewService(d Deps) (*Service, error) {
	switch {
	case d.Store == nil:
		return nil, errors.New("reconcile: no Store to build the service")
	case d.Issuer != nil && (d.Cards == nil || d.Applier == nil):
		return nil, errors.New("reconcile: the card issuer's statements without the cards' ledger and applier")
	case d.Operator != nil && d.Payments == nil:
		return nil, errors.New("reconcile: the operator's records without the payments' ledger")
	}
	if d.Now == nil {
		d.Now = time.Now
	}
	return &Service{Deps: d}, nil
}

// Reconciled reports whether p's records can be read here.
func (s *Service) Reconciled(p Provider) bool {
	switch p {
	case Issuer:
		return s.Issuer != nil
	case Operator:
		return s.Operator != nil
	}
	return false
}

// Get returns report id; ErrNotFound when there is none (a malformed id
// included).
func (s *Service) Get(ctx context.Context, id string) (Report, error) {
	if !ids.IsUUID(id) {
		return Report{}, ErrNotFound
	}
	return s.Store.Get(ctx, id)
}

// List returns page p of the reports, newest first.
func (s *Service) List(ctx context.Context, p page.Request) (page.Result[Report], error) {
	return s.Store.List(ctx, p)
}

// Run reconciles each of ps now, in turn, within ctx's deadline, and
// returns their reports: a provider's run that ran out of time is RUNNING
// (the next sweep continues it), one that failed is FAILED. A new run's
// window starts at from when it is not zero (a window taken again, once
// what a run could not apply is fixed), else where the provider's last
// completed run ended. A provider whose latest run is RUNNING has it
// continued as it is, unless another invocation holds it: ErrRunning,
// before anything is run. A provider not reconciled here is
// ErrNotReconciled; a from not before the window's end is a field error.
// The issuer's window ends now, not Grace ago as the sweeper's does.
func (s *Service) Run(ctx context.Context, ps []Provider, from time.Time) ([]Report, error) {
	if !from.IsZero() && !from.Before(s.now()) {
		return nil, field.Invalid("from", "must be before now")
	}
	for _, p := range ps {
		if !s.Reconciled(p) {
			return nil, fmt.Errorf("%w: %s", ErrNotReconciled, p)
		}
		if _, held, err := s.latestRunning(ctx, p); err != nil {
			return nil, err
		} else if held {
			return nil, fmt.Errorf("%w: %s", ErrRunning, p)
		}
	}
	var out []Report
	for _, p := range ps {
		r, err := s.runOne(ctx, p, from, 0)
		switch {
		case errors.Is(err, ErrBusy):
			return nil, fmt.Errorf("%w: %s", ErrRunning, p)
		case err != nil:
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// RunDue is the sweeper's step: for each provider reconciled here, it
// continues its latest run if RUNNING and held by no invocation, or starts
// a new one when the latest started Every ago or more (or there is none),
// and returns how many runs it took. A run another invocation holds is
// left to it.
func (s *Service) RunDue(ctx context.Context) (int, error) {
	done := 0
	var errs []error
	for _, p := range Providers {
		if !s.Reconciled(p) {
			continue
		}
		st, err := s.Store.State(ctx, p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		running, held, err := s.latestRunning(ctx, p)
		switch {
		case err != nil:
			errs = append(errs, err)
			continue
		case held:
			continue
		case !running && st.Latest != "" && s.now().Sub(st.LatestAt) < s.every():
			continue
		}
		r, err := s.runOne(ctx, p, time.Time{}, Grace)
		switch {
		case errors.Is(err, ErrBusy):
			continue
		case err != nil:
			errs = append(errs, err)
			continue
		}
		done++
		if r.Status == Failed {
			errs = append(errs, fmt.Errorf("reconcile: the %s reconciliation %s failed: %s", p, r.ID, r.Error))
		}
	}
	return done, errors.Join(errs...)
}

// latestRunning reports whether p's latest run is RUNNING, and whether an
// invocation holds it.
func (s *Service) latestRunning(ctx context.Context, p Provider) (running, held bool, err error) {
	st, err := s.Store.State(ctx, p)
	if err != nil || st.Latest == "" {
		return false, false, err
	}
	r, err := s.Store.Get(ctx, st.Latest)
	if err != nil {
		return false, false, err
	}
	return r.Status == Running, r.Status == Running && r.LeaseUntil.After(s.now()), nil
}

// runOne continues p's latest run if RUNNING, else starts a new one (from
// from, when not zero; for the issuer, to grace ago), and runs it until it
// ends or ctx's deadline nears; ErrBusy when another invocation took it
// first.
func (s *Service) runOne(ctx context.Context, p Provider, from time.Time, grace time.Duration) (Report, error) {
	work, cancel := deadline.Work(ctx)
	defer cancel()
	now := s.now()
	lease, until := uuid.NewString(), leaseEnd(work, now)
	st, err := s.Store.State(ctx, p)
	if err != nil {
		return Report{}, err
	}
	var r Report
	running, _, err := s.latestRunning(ctx, p)
	switch {
	case err != nil:
		return Report{}, err
	case running:
		if r, err = s.Store.Take(ctx, st.Latest, lease, until, now); err != nil {
			return Report{}, err
		}
		slog.InfoContext(ctx, "reconciliation continued", "reconciliation_id", r.ID, "provider", p, "phase", r.Progress.Phase)
	default:
		r = s.newReport(p, st, from, now, grace, lease, until)
		if err := s.Store.Start(ctx, r, st.Latest); err != nil {
			return Report{}, err
		}
		slog.InfoContext(ctx, "reconciliation started", "reconciliation_id", r.ID, "provider", p,
			"from", timestamp.Format(r.Window.From), "to", timestamp.Format(r.Window.To))
	}
	return s.finish(ctx, &r, s.steps(work, &r))
}

// newReport returns p's next run, its window from from, or the end of the
// last completed one (FirstWindow back for the first), to now less grace
// for the issuer and less OperatorLag for the operator.
func (s *Service) newReport(p Provider, st State, from, now time.Time, grace time.Duration, lease string, until time.Time) Report {
	to := now.Add(-grace)
	if p == Operator {
		to = now.Add(-OperatorLag)
	}
	switch {
	case !from.IsZero():
	case st.CompletedTo.IsZero():
		from = to.Add(-s.firstWindow())
	default:
		from = st.CompletedTo
	}
	if from.After(to) {
		from = to
	}
	r := Report{ID: ids.NewV7(now), Provider: p, Status: Running, Window: Window{From: from, To: to},
		StartedAt: now, UpdatedAt: now, Lease: lease, LeaseUntil: until}
	r.Progress.Phase = firstPhase(p)
	return r
}

// errOutOfTime ends a run's steps when its invocation's time is nearly
// over: the run stays RUNNING, where it stands.
var errOutOfTime = errors.New("reconcile: out of time")

// steps runs r's phases from where it stands, saving its progress after
// each page, until the last phase is done; errOutOfTime when ctx's
// deadline comes first.
func (s *Service) steps(ctx context.Context, r *Report) error {
	rn := &runner{svc: s, r: r}
	for r.Progress.Phase != phaseDone {
		if !deadline.Enough(ctx, itemTime) {
			return errOutOfTime
		}
		err := rn.step(ctx)
		if errors.Is(err, errOutOfTime) || err == nil {
			if serr := s.checkpoint(ctx, r); serr != nil {
				return serr
			}
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkpoint saves r's progress, within the invocation's own time.
func (s *Service) checkpoint(ctx context.Context, r *Report) error {
	actx, cancel := deadline.Answer(ctx, leaseMargin)
	defer cancel()
	r.UpdatedAt = s.now()
	return s.Store.Save(actx, *r)
}

// finish records how the steps of r ended (err): COMPLETED, RUNNING when
// out of time, FAILED otherwise (the error kept for the operators, logged);
// ErrBusy when the run was taken over meanwhile.
func (s *Service) finish(ctx context.Context, r *Report, err error) (Report, error) {
	switch {
	case errors.Is(err, ErrBusy):
		return Report{}, err
	case errors.Is(err, errOutOfTime):
		slog.InfoContext(ctx, "reconciliation out of time: the next run continues it", "reconciliation_id", r.ID,
			"provider", r.Provider, "phase", r.Progress.Phase)
		return *r, nil
	case err == nil:
		r.Status = Completed
	default:
		r.Status, r.Error = Failed, err.Error()
		slog.ErrorContext(ctx, "reconciliation failed", "reconciliation_id", r.ID, "provider", r.Provider, "error", err)
	}
	now := s.now()
	r.FinishedAt, r.Progress = &now, Progress{}
	if err := s.checkpoint(ctx, r); err != nil {
		return Report{}, err
	}
	slog.InfoContext(ctx, "reconciliation finished", "reconciliation_id", r.ID, "provider", r.Provider, "status", r.Status,
		"matched", r.Matched, "recovered", r.Recovered, "mismatches", r.MismatchCount)
	return *r, nil
}

// leaseEnd is until when, on the service's clock (now), an invocation
// whose work ends with ctx holds a run.
func leaseEnd(ctx context.Context, now time.Time) time.Time {
	if end, ok := ctx.Deadline(); ok {
		return now.Add(time.Until(end) + leaseMargin)
	}
	return now.Add(leaseNoDeadline)
}

func (s *Service) now() time.Time { return timestamp.Of(s.Now()) }

func (s *Service) firstWindow() time.Duration {
	if s.FirstWindow > 0 {
		return s.FirstWindow
	}
	return DefaultFirstWindow
}

func (s *Service) every() time.Duration {
	if s.Every > 0 {
		return s.Every
	}
	return DefaultEvery
}

// runner runs the phases of one report.
type runner struct {
	svc *Service
	r   *Report
	// movements caches, per card, our card transactions of the window by
	// the network's transaction id (movementOf).
	movements map[string]map[string][]cardTx
}

// phaseDone is the phase of a run with nothing left to do.
const phaseDone = "done"

// firstPhase is where a run of p starts.
func firstPhase(p Provider) string {
	if p == Issuer {
		return phaseAuthorizations
	}
	return phasePayments
}

// step runs one page of the current phase and moves the progress on.
func (rn *runner) step(ctx context.Context) error {
	switch rn.r.Progress.Phase {
	case phaseAuthorizations:
		return rn.authorizations(ctx)
	case phaseTransactions:
		return rn.transactions(ctx)
	case phaseDeferred:
		return rn.deferred(ctx)
	case phaseIssuerBalance:
		return rn.issuerBalance(ctx)
	case phasePayments:
		return rn.payments(ctx)
	case phaseOperatorBalance:
		return rn.operatorBalances(ctx)
	}
	return fmt.Errorf("reconcile: unknown phase %q", rn.r.Progress.Phase)
}

// next moves the run to phase, from its start.
func (rn *runner) next(phase string) {
	rn.r.Progress.Phase, rn.r.Progress.After = phase, ""
}

// matched counts one thing both sides have alike.
func (rn *runner) matched() { rn.r.Matched++ }

// recovered counts, and logs, one record of the provider applied here.
func (rn *runner) recovered(ctx context.Context, what, providerID string) {
	rn.r.Recovered++
	slog.WarnContext(ctx, "reconciliation recovered what we had missed", "reconciliation_id", rn.r.ID,
		"provider", rn.r.Provider, "what", what, "provider_id", providerID)
}

// mismatch records m: kept in the report (the first MaxKeptMismatches),
// logged at error level and counted (ReconciliationMismatches).
func (rn *runner) mismatch(ctx context.Context, m Mismatch) {
	rn.r.MismatchCount++
	if len(rn.r.Mismatches) < MaxKeptMismatches {
		rn.r.Mismatches = append(rn.r.Mismatches, m)
	}
	args := []any{"reconciliation_id", rn.r.ID, "provider", rn.r.Provider, "kind", m.Kind, "subject", m.Subject,
		"provider_id", m.ProviderID, "company_id", m.CompanyID, "reference", m.Reference, "transaction_id", m.TransactionID,
		"provider_status", m.ProviderStatus, "our_status", m.OurStatus, "detail", m.Detail}
	if m.ProviderAmount != nil {
		args = append(args, "provider_amount", *m.ProviderAmount)
	}
	if m.OurAmount != nil {
		args = append(args, "our_amount", *m.OurAmount)
	}
	slog.ErrorContext(ctx, "reconciliation mismatch", args...)
	metrics.Count(ctx, metrics.ReconciliationMismatches)
}

// amount returns a pointer to n, for a Mismatch.
func amount(n int64) *int64 { return &n }

// outOfTime reports whether err is ctx running out (the item is left for
// the next run), as opposed to a failure.
func outOfTime(ctx context.Context, err error) bool {
	return ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded)
}
