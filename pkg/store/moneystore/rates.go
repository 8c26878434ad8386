package moneystore

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/shopspring/decimal"

	"payments/pkg/fx"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

var _ fx.Store = (*Rates)(nil)

// Rates keeps the companies' exchange rates: in the company partition,
// RATE#<from>#<to> is the pair's current rate, its value as the exact
// decimal text, and its version (rate_id), which every write of it and
// every money movement at it is conditioned on; RATEVERSION#<rate id> is
// each version ever made current, written with it, so that an
// exchangeRateId a client names can be told stale (a version of the pair
// no longer current) from unknown or of another pair.
type Rates struct{ db *store.DB }

// NewRates returns the rates store on db.
func NewRates(db *store.DB) *Rates { return &Rates{db: db} }

// rateItem is a rate as stored.
type rateItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	CompanyID string `dynamodbav:"company_id"`
	From      string `dynamodbav:"from_currency"`
	To        string `dynamodbav:"to_currency"`
	Rate      string `dynamodbav:"rate"`
	RateID    string `dynamodbav:"rate_id"`
	UpdatedAt string `dynamodbav:"updated_at"`
}

func (it rateItem) rate() (fx.Rate, error) {
	v, err := decimal.NewFromString(it.Rate)
	if err != nil {
		return fx.Rate{}, fmt.Errorf("store: rate %s: %w", it.SK, err)
	}
	at, err := timestamp.Parse(it.UpdatedAt)
	if err != nil {
		return fx.Rate{}, fmt.Errorf("store: rate %s updated_at: %w", it.SK, err)
	}
	return fx.Rate{CompanyID: it.CompanyID, From: it.From, To: it.To, Value: v, ID: it.RateID, UpdatedAt: at}, nil
}

// Rate reads the company's current rate of from → to, strongly
// consistent; fx.ErrNoRate when there is none.
func (s *Rates) Rate(ctx context.Context, companyID, from, to string) (fx.Rate, error) {
	var it rateItem
	if err := s.db.Get(ctx, "rate "+from+" → "+to, schema.CompanyPK(companyID), schema.RateSK(from, to), &it, fx.ErrNoRate); err != nil {
		return fx.Rate{}, err
	}
	return it.rate()
}

// Rates reads every current rate of the company, by pair, strongly
// consistent.
func (s *Rates) Rates(ctx context.Context, companyID string) ([]fx.Rate, error) {
	items, err := NewWallets(s.db).query(ctx, &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :prefix)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(schema.CompanyPK(companyID)), ":prefix": dynamo.Str(schema.RateSKPrefix),
		},
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return nil, fmt.Errorf("store: list rates: %w", err)
	}
	return dynamo.DecodeAll(items, rateItem.rate)
}

// PutRate makes r its pair's current rate on the condition that the pair's
// version is still previous ("" when the pair has none), fx.ErrChanged
// otherwise, and records r as version r.ID, in one transaction.
func (s *Rates) PutRate(ctx context.Context, r fx.Rate, previous string) error {
	it := rateItem{
		PK: schema.CompanyPK(r.CompanyID), SK: schema.RateSK(r.From, r.To), Type: schema.KindExchangeRate, CompanyID: r.CompanyID,
		From: r.From, To: r.To, Rate: r.Value.String(), RateID: r.ID, UpdatedAt: timestamp.Format(r.UpdatedAt),
	}
	current, err := attributevalue.MarshalMap(it)
	if err != nil {
		return fmt.Errorf("store: marshal rate: %w", err)
	}
	it.SK, it.Type = schema.RateVersionSK(r.ID), schema.KindExchangeRateVersion
	version, err := attributevalue.MarshalMap(it)
	if err != nil {
		return fmt.Errorf("store: marshal rate version: %w", err)
	}
	put := &types.Put{TableName: aws.String(s.db.Table), Item: current}
	if previous == "" {
		put.ConditionExpression = aws.String("attribute_not_exists(PK)")
	} else {
		put.ConditionExpression = aws.String("#rid = :previous")
		put.ExpressionAttributeNames = map[string]string{"#rid": "rate_id"}
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":previous": dynamo.Str(previous)}
	}
	t := &store.Txn{}
	t.Add(schema.RateItem, types.TransactWriteItem{Put: put})
	t.Add("version", NewWallets(s.db).putNew(version))
	return s.db.CommitOnce(ctx, "put rate "+r.From+" → "+r.To, t, func(_ context.Context, k dynamo.Cancellation) error {
		if k.Failed(schema.RateItem) {
			return fx.ErrChanged
		}
		return nil
	})
}

// Version reads version id of one of the company's rates, strongly
// consistent: the rate as it was made current. fx.ErrNoRate when the
// company has no such version.
func (s *Rates) Version(ctx context.Context, companyID, id string) (fx.Rate, error) {
	var it rateItem
	if err := s.db.Get(ctx, "rate version "+id, schema.CompanyPK(companyID), schema.RateVersionSK(id), &it, fx.ErrNoRate); err != nil {
		return fx.Rate{}, err
	}
	return it.rate()
}

// rateCheck returns the transaction item that checks that the company's
// rate of from → to is still at version id: a movement at a quoted rate
// carries it (its failure is fx.ErrRateChanged).
func (s *Rates) rateCheck(companyID, from, to, id string) types.TransactWriteItem {
	return types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(schema.CompanyPK(companyID), schema.RateSK(from, to)),
		ConditionExpression:       aws.String("#rid = :id"),
		ExpressionAttributeNames:  map[string]string{"#rid": "rate_id"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":id": dynamo.Str(id)},
	}}
}
