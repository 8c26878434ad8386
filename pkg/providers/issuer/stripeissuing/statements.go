package stripeissuing

import (
	"context"
	"strings"
	"time"

	stripe "github.com/stripe/stripe-go/v85"

	"payments/pkg/providers/issuer"
)

var _ issuer.Statements = (*Client)(nil)

// maxPage is the most objects Stripe lists in one page.
const maxPage = 100

// Transactions lists Stripe's transactions (GET /v1/issuing/transactions,
// created[gte] since, their cards expanded for our reference), oldest
// first, as issuer.Statements says: captures as settlements, refunds as
// refunds, each of its positive amount.
func (c *Client) Transactions(ctx context.Context, since time.Time, after string, limit int) ([]issuer.StatementTransaction, string, error) {
	list := func(lp stripe.ListParams) *stripe.V1List[*stripe.IssuingTransaction] {
		p := &stripe.IssuingTransactionListParams{ListParams: lp, CreatedRange: &stripe.RangeQueryParams{GreaterThanOrEqual: since.Unix()}}
		p.AddExpand("data.card")
		return c.sc.V1IssuingTransactions.List(ctx, p)
	}
	page, next, err := oldestFirst(ctx, list, func(t *stripe.IssuingTransaction) string { return t.ID }, after, limit)
	if err != nil {
		return nil, "", fail("list transactions", err, nil)
	}
	out := make([]issuer.StatementTransaction, 0, len(page))
	for _, t := range page {
		st := issuer.StatementTransaction{ID: t.ID, Amount: t.Amount, CreatedAt: time.Unix(t.Created, 0).UTC()}
		switch t.Type {
		case stripe.IssuingTransactionTypeCapture:
			st.Type, st.Amount = issuer.NotifySettlement, -t.Amount
		case stripe.IssuingTransactionTypeRefund:
			st.Type = issuer.NotifyRefund
		default:
			continue
		}
		if t.Card != nil {
			st.CardID = t.Card.ID
			if t.Card.Metadata != nil {
				st.Reference = t.Card.Metadata[Reference]
				c.remember(t.Card.ID, st.Reference)
			}
		}
		if t.Authorization != nil {
			st.AuthorizationID = t.Authorization.ID
		}
		if t.MerchantData != nil {
			m := merchant(t.MerchantData)
			st.Merchant = &m
		}
		out = append(out, st)
	}
	return out, next, nil
}

// Authorizations lists Stripe's authorizations (GET
// /v1/issuing/authorizations, created[gte] since), oldest first, as
// issuer.Statements says: a pending one holds its amount.
func (c *Client) Authorizations(ctx context.Context, since time.Time, after string, limit int) ([]issuer.StatementAuthorization, string, error) {
	list := func(lp stripe.ListParams) *stripe.V1List[*stripe.IssuingAuthorization] {
		p := &stripe.IssuingAuthorizationListParams{ListParams: lp, CreatedRange: &stripe.RangeQueryParams{GreaterThanOrEqual: since.Unix()}}
		return c.sc.V1IssuingAuthorizations.List(ctx, p)
	}
	page, next, err := oldestFirst(ctx, list, func(a *stripe.IssuingAuthorization) string { return a.ID }, after, limit)
	if err != nil {
		return nil, "", fail("list authorizations", err, nil)
	}
	out := make([]issuer.StatementAuthorization, 0, len(page))
	for _, a := range page {
		sa := issuer.StatementAuthorization{
			ID: a.ID, Kind: statementKind(a), Approved: a.Approved, CreatedAt: time.Unix(a.Created, 0).UTC(),
		}
		switch a.Status {
		case stripe.IssuingAuthorizationStatusPending:
			sa.Status, sa.Held = issuer.AuthorizationPending, a.Amount
		case stripe.IssuingAuthorizationStatusClosed:
			sa.Status = issuer.AuthorizationClosed
		case stripe.IssuingAuthorizationStatusReversed:
			sa.Status = issuer.AuthorizationReversed
		case stripe.IssuingAuthorizationStatusExpired:
			sa.Status = issuer.AuthorizationExpired
		default:
			sa.Status = strings.ToUpper(string(a.Status))
		}
		if a.Card != nil {
			sa.CardID = a.Card.ID
			if a.Card.Metadata != nil {
				sa.Reference = a.Card.Metadata[Reference]
				c.remember(a.Card.ID, sa.Reference)
			}
		}
		if a.MerchantData != nil {
			m := merchant(a.MerchantData)
			sa.Merchant = &m
		}
		out = append(out, sa)
	}
	return out, next, nil
}

// statementKind is an authorization's kind: its first request's amount
// says, or, with no request history, whether it ever held or captured
// anything.
func statementKind(a *stripe.IssuingAuthorization) string {
	if len(a.RequestHistory) > 0 && a.RequestHistory[0] != nil {
		return kind(a.RequestHistory[0].Amount)
	}
	if a.Amount > 0 || a.MerchantAmount > 0 || len(a.Transactions) > 0 {
		return issuer.KindAuthorization
	}
	return issuer.KindVerification
}

// Balance reads the account's Issuing balance available in USD (GET
// /v1/balance, issuing.available).
func (c *Client) Balance(ctx context.Context) (int64, error) {
	b, err := c.sc.V1Balance.Retrieve(ctx, nil)
	if err != nil {
		return 0, fail("read the balance", err, nil)
	}
	var usd int64
	if b.Issuing != nil {
		for _, a := range b.Issuing.Available {
			if a != nil && a.Currency == stripe.CurrencyUSD {
				usd += a.Amount
			}
		}
	}
	return usd, nil
}

// oldestFirst returns a page of up to limit objects (1 to 100; another
// limit is 100) that list gives, oldest first, after the object after,
// and the id of the last when newer ones are left. Stripe lists newest
// first: a page after an object asks for the ones before it in Stripe's
// order (ending_before), which stripe-go gives oldest first; the first
// page walks Stripe's whole list, keeping its oldest. list is asked with
// the cursor and the page's size set.
func oldestFirst[T any](ctx context.Context, list func(stripe.ListParams) *stripe.V1List[T], id func(T) string, after string, limit int) ([]T, string, error) {
	if limit < 1 || limit > maxPage {
		limit = maxPage
	}
	if after != "" {
		l := list(stripe.ListParams{EndingBefore: stripe.String(after), Limit: stripe.Int64(int64(limit)), Single: true})
		if err := l.Err(); err != nil {
			return nil, "", err
		}
		page := l.Data()
		if len(page) > 0 && l.Meta().HasMore {
			return page, id(page[len(page)-1]), nil
		}
		return page, "", nil
	}
	var oldest []T // newest first, at most limit
	more := false
	for v, err := range list(stripe.ListParams{Limit: stripe.Int64(maxPage)}).All(ctx) {
		if err != nil {
			return nil, "", err
		}
		if len(oldest) == limit {
			oldest, more = oldest[1:], true
		}
		oldest = append(oldest, v)
	}
	page := make([]T, 0, len(oldest))
	for i := len(oldest) - 1; i >= 0; i-- {
		page = append(page, oldest[i])
	}
	if more && len(page) > 0 {
		return page, id(page[len(page)-1]), nil
	}
	return page, "", nil
}
