package moneystore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/page"
	"payments/pkg/reconcile"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

var _ reconcile.Store = (*Reconciliations)(nil)

// Reconciliations stores the reconciliation's reports, in the partition
// RECONCILIATION that no company owns (they are about the providers'
// records of every company):
//
//   - RUN#<id>: a report, with its progress and lease while RUNNING;
//   - PROVIDER#<provider>: the provider's state, its latest run (latest,
//     latest_at) and the end of its last completed window
//     (completed_to), written with the run it names.
type Reconciliations struct{ db *store.DB }

// NewReconciliations returns the reconciliations' store on db.
func NewReconciliations(db *store.DB) *Reconciliations { return &Reconciliations{db: db} }

type mismatchItem struct {
	Kind           string `dynamodbav:"kind"`
	Subject        string `dynamodbav:"subject"`
	ProviderID     string `dynamodbav:"provider_id,omitempty"`
	CompanyID      string `dynamodbav:"company_id,omitempty"`
	Reference      string `dynamodbav:"reference,omitempty"`
	TransactionID  string `dynamodbav:"transaction_id,omitempty"`
	Currency       string `dynamodbav:"currency,omitempty"`
	ProviderAmount *int64 `dynamodbav:"provider_amount,omitempty"`
	OurAmount      *int64 `dynamodbav:"our_amount,omitempty"`
	ProviderStatus string `dynamodbav:"provider_status,omitempty"`
	OurStatus      string `dynamodbav:"our_status,omitempty"`
	Detail         string `dynamodbav:"detail,omitempty"`
}

type balanceItem struct {
	Country  string `dynamodbav:"country,omitempty"`
	Currency string `dynamodbav:"currency"`
	Provider int64  `dynamodbav:"provider"`
	Ours     *int64 `dynamodbav:"ours,omitempty"`
}

// reconciliationItem is a report as stored.
type reconciliationItem struct {
	PK            string         `dynamodbav:"PK"`
	SK            string         `dynamodbav:"SK"`
	Type          string         `dynamodbav:"type"`
	ID            string         `dynamodbav:"id"`
	Provider      string         `dynamodbav:"provider"`
	Status        string         `dynamodbav:"status"`
	From          string         `dynamodbav:"window_from"`
	To            string         `dynamodbav:"window_to"`
	Matched       int            `dynamodbav:"matched"`
	Recovered     int            `dynamodbav:"recovered"`
	Mismatches    []mismatchItem `dynamodbav:"mismatches,omitempty"`
	MismatchCount int            `dynamodbav:"mismatch_count"`
	Balances      []balanceItem  `dynamodbav:"balances,omitempty"`
	Error         string         `dynamodbav:"error,omitempty"`
	StartedAt     string         `dynamodbav:"started_at"`
	UpdatedAt     string         `dynamodbav:"updated_at"`
	FinishedAt    string         `dynamodbav:"finished_at,omitempty"`
	Phase         string         `dynamodbav:"phase,omitempty"`
	After         string         `dynamodbav:"after,omitempty"`
	Since         string         `dynamodbav:"since,omitempty"`
	Unseen        []string       `dynamodbav:"unseen,omitempty"`
	Deferred      []string       `dynamodbav:"deferred,omitempty"`
	Lease         string         `dynamodbav:"lease,omitempty"`
	LeaseUntil    string         `dynamodbav:"lease_until,omitempty"`
}

func newReconciliationItem(r reconcile.Report) reconciliationItem {
	it := reconciliationItem{
		PK: schema.ReconciliationPK, SK: schema.ReconciliationSK(r.ID), Type: schema.KindReconciliation, ID: r.ID, Provider: string(r.Provider),
		Status: string(r.Status), From: timestamp.Format(r.Window.From), To: timestamp.Format(r.Window.To),
		Matched: r.Matched, Recovered: r.Recovered, MismatchCount: r.MismatchCount, Error: r.Error,
		StartedAt: timestamp.Format(r.StartedAt), UpdatedAt: timestamp.Format(r.UpdatedAt),
		Phase: r.Progress.Phase, After: r.Progress.After, Unseen: r.Progress.Unseen, Deferred: r.Progress.Deferred,
		Lease: r.Lease,
	}
	if !r.Progress.Since.IsZero() {
		it.Since = timestamp.Format(r.Progress.Since)
	}
	if !r.LeaseUntil.IsZero() {
		it.LeaseUntil = timestamp.Format(r.LeaseUntil)
	}
	if r.FinishedAt != nil {
		it.FinishedAt = timestamp.Format(*r.FinishedAt)
	}
	for _, m := range r.Mismatches {
		it.Mismatches = append(it.Mismatches, mismatchItem{Kind: string(m.Kind), Subject: m.Subject, ProviderID: m.ProviderID,
			CompanyID: m.CompanyID, Reference: m.Reference, TransactionID: m.TransactionID, Currency: m.Currency,
			ProviderAmount: m.ProviderAmount, OurAmount: m.OurAmount, ProviderStatus: m.ProviderStatus, OurStatus: m.OurStatus, Detail: m.Detail})
	}
	for _, b := range r.Balances {
		it.Balances = append(it.Balances, balanceItem{Country: b.Country, Currency: b.Currency, Provider: b.Provider, Ours: b.Ours})
	}
	return it
}

func (it reconciliationItem) report() (reconcile.Report, error) {
	r := reconcile.Report{
		ID: it.ID, Provider: reconcile.Provider(it.Provider), Status: reconcile.Status(it.Status),
		Matched: it.Matched, Recovered: it.Recovered, MismatchCount: it.MismatchCount, Error: it.Error,
		Progress: reconcile.Progress{Phase: it.Phase, After: it.After, Unseen: it.Unseen, Deferred: it.Deferred},
		Lease:    it.Lease,
	}
	times := []struct {
		s   string
		out *time.Time
	}{{it.From, &r.Window.From}, {it.To, &r.Window.To}, {it.StartedAt, &r.StartedAt}, {it.UpdatedAt, &r.UpdatedAt},
		{it.Since, &r.Progress.Since}, {it.LeaseUntil, &r.LeaseUntil}}
	for _, t := range times {
		if t.s == "" {
			continue
		}
		v, err := timestamp.Parse(t.s)
		if err != nil {
			return reconcile.Report{}, fmt.Errorf("store: reconciliation %s: %w", it.ID, err)
		}
		*t.out = v
	}
	if it.FinishedAt != "" {
		v, err := timestamp.Parse(it.FinishedAt)
		if err != nil {
			return reconcile.Report{}, fmt.Errorf("store: reconciliation %s finished_at: %w", it.ID, err)
		}
		r.FinishedAt = &v
	}
	for _, m := range it.Mismatches {
		r.Mismatches = append(r.Mismatches, reconcile.Mismatch{Kind: reconcile.Kind(m.Kind), Subject: m.Subject, ProviderID: m.ProviderID,
			CompanyID: m.CompanyID, Reference: m.Reference, TransactionID: m.TransactionID, Currency: m.Currency,
			ProviderAmount: m.ProviderAmount, OurAmount: m.OurAmount, ProviderStatus: m.ProviderStatus, OurStatus: m.OurStatus, Detail: m.Detail})
	}
	for _, b := range it.Balances {
		r.Balances = append(r.Balances, reconcile.Balance{Country: b.Country, Currency: b.Currency, Provider: b.Provider, Ours: b.Ours})
	}
	return r, nil
}

// reconciliationStateItem is a provider's state as stored.
type reconciliationStateItem struct {
	Latest      string `dynamodbav:"latest"`
	LatestAt    string `dynamodbav:"latest_at"`
	CompletedTo string `dynamodbav:"completed_to"`
}

// State reads the provider's state, strongly consistent; a provider never
// run has the zero State.
func (s *Reconciliations) State(ctx context.Context, p reconcile.Provider) (reconcile.State, error) {
	var it reconciliationStateItem
	found, err := s.db.Find(ctx, schema.ReconciliationPK, schema.ReconciliationStateSK(string(p)), &it)
	if err != nil || !found {
		return reconcile.State{}, err
	}
	var st reconcile.State
	st.Latest = it.Latest
	for _, t := range []struct {
		s   string
		out *time.Time
	}{{it.LatestAt, &st.LatestAt}, {it.CompletedTo, &st.CompletedTo}} {
		if t.s == "" {
			continue
		}
		v, err := timestamp.Parse(t.s)
		if err != nil {
			return reconcile.State{}, fmt.Errorf("store: the %s reconciliation's state: %w", p, err)
		}
		*t.out = v
	}
	return st, nil
}

// Start puts r and makes it the provider's latest run, in one transaction,
// on the condition that the latest is still prev.
func (s *Reconciliations) Start(ctx context.Context, r reconcile.Report, prev string) error {
	item, err := attributevalue.MarshalMap(newReconciliationItem(r))
	if err != nil {
		return fmt.Errorf("store: marshal reconciliation %s: %w", r.ID, err)
	}
	cond, values := "attribute_not_exists(#latest)", map[string]types.AttributeValue{
		":id": dynamo.Str(r.ID), ":at": dynamo.Str(timestamp.Format(r.StartedAt)), ":type": dynamo.Str(schema.KindReconciliationState),
	}
	if prev != "" {
		cond, values[":prev"] = "#latest = :prev", dynamo.Str(prev)
	}
	t := &dynamo.Txn{}
	t.Add("run", types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.db.Table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	}})
	t.Add("state", types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(schema.ReconciliationPK, schema.ReconciliationStateSK(string(r.Provider))),
		UpdateExpression:          aws.String("SET #latest = :id, #at = :at, #type = :type"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#latest": "latest", "#at": "latest_at", "#type": schema.AttrType},
		ExpressionAttributeValues: values,
	}})
	return s.db.WriteOnce(ctx, "start reconciliation "+r.ID, t, func(context.Context, dynamo.Cancellation) error {
		return reconcile.ErrBusy
	})
}

// Take leases run id, RUNNING and leased until before now, until until.
func (s *Reconciliations) Take(ctx context.Context, id, lease string, until, now time.Time) (reconcile.Report, error) {
	out, err := s.db.Update(ctx, "take reconciliation "+id, &dynamodb.UpdateItemInput{
		TableName:           aws.String(s.db.Table),
		Key:                 dynamo.Key(schema.ReconciliationPK, schema.ReconciliationSK(id)),
		UpdateExpression:    aws.String("SET #lease = :lease, #until = :until"),
		ConditionExpression: aws.String("#status = :running AND (attribute_not_exists(#until) OR #until < :now)"),
		ExpressionAttributeNames: map[string]string{
			"#lease": "lease", "#until": "lease_until", "#status": "status",
		},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":lease": dynamo.Str(lease), ":until": dynamo.Str(timestamp.Format(until)),
			":running": dynamo.Str(string(reconcile.Running)), ":now": dynamo.Str(timestamp.Format(now)),
		},
		ReturnValues: types.ReturnValueAllNew,
	})
	if dynamo.ConditionFailed(err) {
		return reconcile.Report{}, reconcile.ErrBusy
	}
	if err != nil {
		return reconcile.Report{}, err
	}
	var it reconciliationItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return reconcile.Report{}, fmt.Errorf("store: unmarshal reconciliation %s: %w", id, err)
	}
	return it.report()
}

// Save puts r on the condition that its lease still holds it; a COMPLETED
// r moves the provider's completed_to to its window's end in the same
// transaction.
func (s *Reconciliations) Save(ctx context.Context, r reconcile.Report) error {
	item, err := attributevalue.MarshalMap(newReconciliationItem(r))
	if err != nil {
		return fmt.Errorf("store: marshal reconciliation %s: %w", r.ID, err)
	}
	t := &dynamo.Txn{}
	t.Add("run", types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.db.Table), Item: item, ConditionExpression: aws.String("#lease = :lease"),
		ExpressionAttributeNames:  map[string]string{"#lease": "lease"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":lease": dynamo.Str(r.Lease)},
	}})
	if r.Status == reconcile.Completed {
		t.Add("state", types.TransactWriteItem{Update: &types.Update{
			TableName:                 aws.String(s.db.Table),
			Key:                       dynamo.Key(schema.ReconciliationPK, schema.ReconciliationStateSK(string(r.Provider))),
			UpdateExpression:          aws.String("SET #to = :to"),
			ExpressionAttributeNames:  map[string]string{"#to": "completed_to"},
			ExpressionAttributeValues: map[string]types.AttributeValue{":to": dynamo.Str(timestamp.Format(r.Window.To))},
		}})
	}
	return s.db.WriteOnce(ctx, "save reconciliation "+r.ID, t, func(_ context.Context, c dynamo.Cancellation) error {
		if c.Failed("run") {
			return reconcile.ErrBusy
		}
		return nil
	})
}

// Get reads report id, strongly consistent.
func (s *Reconciliations) Get(ctx context.Context, id string) (reconcile.Report, error) {
	var it reconciliationItem
	if err := s.db.Get(ctx, "reconciliation "+id, schema.ReconciliationPK, schema.ReconciliationSK(id), &it, reconcile.ErrNotFound); err != nil {
		return reconcile.Report{}, err
	}
	return it.report()
}

// List reads page p of the reports, newest first, strongly consistent
// (ReadPage; report ids are UUID v7).
func (s *Reconciliations) List(ctx context.Context, p page.Request) (page.Result[reconcile.Report], error) {
	lo, hi := dynamo.TimeRange(schema.ReconciliationSKPrefix, time.Time{}, time.Time{})
	l := dynamo.Listing{PKAttr: schema.AttrPK, SKAttr: schema.AttrSK, PK: schema.ReconciliationPK, Prefix: schema.ReconciliationSKPrefix, Lo: lo, Hi: hi, Consistent: true}
	rows, total, next, err := s.db.ReadPage(ctx, l, p)
	if err != nil {
		return page.Result[reconcile.Report]{}, err
	}
	return dynamo.PageOf(rows, total, next, reconciliationItem.report)
}
