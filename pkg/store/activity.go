package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"payments/pkg/activity"
	"payments/pkg/page"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

var _ activity.Store = (*Activity)(nil)

// Activity keeps the companies' activity logs, each entry in its
// company's partition under schema.ActivitySK, kept as long as the
// company's other records.
type Activity struct{ db *DB }

// NewActivity returns the activity logs' store over db.
func NewActivity(db *DB) *Activity { return &Activity{db: db} }

// activityItem is an activity entry's record.
type activityItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	CompanyID string `dynamodbav:"company_id"`
	At        string `dynamodbav:"at"`
	Actor     string `dynamodbav:"actor"`
	Action    string `dynamodbav:"action"`
	Subject   string `dynamodbav:"subject,omitempty"`
}

func (it activityItem) entry() (activity.Entry, error) {
	at, err := time.Parse(time.RFC3339Nano, it.At)
	if err != nil {
		return activity.Entry{}, fmt.Errorf("store: activity %s: at: %w", it.ID, err)
	}
	return activity.Entry{ID: it.ID, CompanyID: it.CompanyID, At: at, Actor: it.Actor, Action: it.Action, Subject: it.Subject}, nil
}

// RecordActivity writes e, refusing to overwrite an entry of the same id.
func (s *Activity) RecordActivity(ctx context.Context, e activity.Entry) error {
	item, err := attributevalue.MarshalMap(activityItem{
		PK: schema.CompanyPK(e.CompanyID), SK: schema.ActivitySK(e.ID), Type: schema.KindActivity,
		ID: e.ID, CompanyID: e.CompanyID, At: e.At.UTC().Format(time.RFC3339Nano),
		Actor: e.Actor, Action: e.Action, Subject: e.Subject,
	})
	if err != nil {
		return fmt.Errorf("store: encode activity: %w", err)
	}
	return s.db.Put(ctx, "record activity", &dynamodb.PutItemInput{
		TableName:           aws.String(s.db.Table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
}

// Activity reads page p of the company's entries, newest first, strongly
// consistent (ReadPage).
func (s *Activity) Activity(ctx context.Context, companyID string, p page.Request) (page.Result[activity.Entry], error) {
	lo, hi := dynamo.TimeRange(schema.ActivitySKPrefix, time.Time{}, time.Time{})
	l := dynamo.Listing{
		PKAttr: schema.AttrPK, SKAttr: schema.AttrSK, PK: schema.CompanyPK(companyID),
		Prefix: schema.ActivitySKPrefix, Lo: lo, Hi: hi, Consistent: true,
	}
	rows, total, next, err := s.db.ReadPage(ctx, l, p)
	if err != nil {
		return page.Result[activity.Entry]{}, fmt.Errorf("store: list activity: %w", err)
	}
	return dynamo.PageOf(rows, total, next, activityItem.entry)
}
