package bulk

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"payments/pkg/field"
	"payments/pkg/metrics"
	"payments/pkg/payments"
	"payments/pkg/wallets"
)

// memoWallets returns a lookup that reads each wallet once, for one
// goroutine.
func memoWallets(read payments.WalletLookup) payments.WalletLookup {
	type found struct {
		w   wallets.Wallet
		err error
	}
	known := map[string]found{}
	return func(ctx context.Context, companyID, currency, country string) (wallets.Wallet, error) {
		key := currency + "#" + country
		if f, ok := known[key]; ok {
			return f.w, f.err
		}
		w, err := read(ctx, companyID, currency, country)
		known[key] = found{w, err}
		return w, err
	}
}

// itemError is the refusal of an all_or_nothing batch for row r: r's own
// error, on the field items[<row>].<field>.
func itemError(r checked) error {
	name := fmt.Sprintf("items[%d]", r.in.Row)
	if r.rejected.Field != "" {
		name += "." + r.rejected.Field
	}
	var fe *field.Error
	if errors.As(r.err, &fe) {
		return field.Invalid(name, fe.Problem+"; nothing was reserved (mode all_or_nothing)")
	}
	var ff *field.Fault
	if errors.As(r.err, &ff) {
		return field.On(ff.Err, name)
	}
	return field.On(r.err, name)
}

// countAccepted records the payouts b accepted (PayoutsAccepted, as a
// single payout's acceptance does), by operator.
func countAccepted(ctx context.Context, b Batch, chunks []Chunk) {
	byOperator := map[string]int{}
	for _, c := range chunks {
		for _, r := range c.Rows {
			if r.Accepted != nil {
				byOperator[r.Operator]++
			}
		}
	}
	for op, n := range byOperator {
		metrics.Record(ctx, []metrics.Dimension{metrics.Currency(b.Currency), metrics.Operator(op)},
			metrics.Metric{Name: metrics.PayoutsAccepted, Unit: metrics.UnitCount, Value: float64(n)})
	}
}

// firstRejected returns the first MaxRejectedShown rejected rows.
func firstRejected(chunks []Chunk) []Row {
	var out []Row
	for _, c := range chunks {
		for _, r := range c.Rows {
			if r.Rejection != nil && len(out) < MaxRejectedShown {
				out = append(out, r)
			}
		}
	}
	return out
}

// accepted answers the retry of a request that committed batch id: the
// batch as it stands and its first rejected rows.
func (s *Service) accepted(ctx context.Context, companyID, id string) (Acceptance, error) {
	b, err := s.store.GetBatch(ctx, companyID, id)
	if err != nil {
		return Acceptance{}, err
	}
	var rejected []Row
	for n := 0; n < b.Chunks && len(rejected) < MaxRejectedShown; n++ {
		c, err := s.store.GetChunk(ctx, companyID, id, n)
		if err != nil {
			return Acceptance{}, err
		}
		rejected = append(rejected, firstRejected([]Chunk{c})...)
	}
	return Acceptance{Batch: b, Rejected: rejected[:min(len(rejected), MaxRejectedShown)]}, nil
}

// MaxRejectedCell bounds each cell a rejected row keeps, in bytes: a
// rejected cell may be of any length, and a chunk of rows is one DynamoDB
// item (at most 400 KB). An accepted row's cells are bounded by the
// payout's rules.
const MaxRejectedCell = 256

// clipped returns in with each cell cut to MaxRejectedCell bytes, at a
// character's boundary.
func (in Input) clipped() Input {
	clip := func(s string) string {
		if len(s) <= MaxRejectedCell {
			return s
		}
		cut := MaxRejectedCell
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return s[:cut]
	}
	in.ExternalID, in.Operator, in.Country, in.PhoneNumber = clip(in.ExternalID), clip(in.Operator), clip(in.Country), clip(in.PhoneNumber)
	in.Amount, in.Currency, in.Reason, in.NotifyURL = clip(in.Amount), clip(in.Currency), clip(in.Reason), clip(in.NotifyURL)
	return in
}

// request returns in as a single payout's request.
func (in Input) request() payments.Request {
	return payments.Request{
		Operator: in.Operator, Country: in.Country, PhoneNumber: in.PhoneNumber, Amount: in.Amount,
		Currency: in.Currency, ExternalID: in.ExternalID, NotifyURL: in.NotifyURL, Reason: in.Reason,
	}
}
