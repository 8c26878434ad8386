package issuerdb

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// The sandbox network's unacknowledged notifications:
//
//   - SANDBOX#ISSUER#NOTICE#<event id>: a notification as delivered, with
//     its attempts and when it is due again; in the table's GSI1 (GSI1PK,
//     GSI1SK, its first index) under
//     SANDBOX#ISSUER#NOTICES, sorted by "<due>#<event id>", so that the
//     due ones are one query. One partition serves every company's cards:
//     a sandbox network's notifications are few.
//
// The keys are built in pkg/store/schema (SandboxNoticePK,
// SandboxNoticesGSI1PK).

type noticeItem struct {
	PK       string `dynamodbav:"PK"`
	SK       string `dynamodbav:"SK"`
	GSI1PK   string `dynamodbav:"GSI1PK"`
	GSI1SK   string `dynamodbav:"GSI1SK"`
	Type     string `dynamodbav:"type"`
	ID       string `dynamodbav:"id"`
	Body     []byte `dynamodbav:"body"`
	Attempts int    `dynamodbav:"attempts"`
	Due      string `dynamodbav:"due"`
}

// dueKey is the GSI1 sort key of notification id due at due.
func dueKey(due time.Time, id string) string { return timestamp.Format(due) + "#" + id }

// newNoticeItem returns n as stored.
func newNoticeItem(n issuersandbox.Notice) noticeItem {
	return noticeItem{
		PK: schema.SandboxNoticePK(n.ID), SK: schema.SandboxNoticeSK, GSI1PK: schema.SandboxNoticesGSI1PK, GSI1SK: dueKey(n.Due, n.ID),
		Type: schema.KindSandboxNotice, ID: n.ID, Body: n.Body, Attempts: n.Attempts, Due: timestamp.Format(n.Due),
	}
}

// KeepNotice puts n; a notification kept already is kept as it is.
func (s *Store) KeepNotice(ctx context.Context, n issuersandbox.Notice) error {
	item, err := attributevalue.MarshalMap(newNoticeItem(n))
	if err != nil {
		return fmt.Errorf("store: marshal sandbox notice %s: %w", n.ID, err)
	}
	err = s.db.Put(ctx, "keep sandbox notice "+n.ID, &dynamodb.PutItemInput{
		TableName: aws.String(s.db.Table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if dynamo.ConditionFailed(err) {
		return nil
	}
	return err
}

// AckNotice deletes notification id.
func (s *Store) AckNotice(ctx context.Context, id string) error {
	_, err := s.db.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.db.Table), Key: dynamo.Key(schema.SandboxNoticePK(id), schema.SandboxNoticeSK),
	})
	if err != nil {
		return fmt.Errorf("store: acknowledge sandbox notice %s: %w", id, err)
	}
	return nil
}

// DueNotices queries GSI1 for the notifications due at or before now
// (eventually consistent: one acknowledged a moment ago may come back, and
// is delivered again harmlessly).
func (s *Store) DueNotices(ctx context.Context, now time.Time, limit int) ([]issuersandbox.Notice, error) {
	out, err := s.db.Client.Query(ctx, &dynamodb.QueryInput{
		TableName:                aws.String(s.db.Table),
		IndexName:                aws.String(schema.GSI1),
		KeyConditionExpression:   aws.String("#pk = :pk AND #sk < :after"),
		ExpressionAttributeNames: map[string]string{"#pk": schema.AttrGSI1PK, "#sk": schema.AttrGSI1SK},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(schema.SandboxNoticesGSI1PK), ":after": dynamo.Str(timestamp.Format(now) + "$"), // '$' follows '#'
		},
		Limit: aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, fmt.Errorf("store: query due sandbox notices: %w", err)
	}
	return dynamo.DecodeAll(out.Items, func(it noticeItem) (issuersandbox.Notice, error) {
		due, err := timestamp.Parse(it.Due)
		if err != nil {
			return issuersandbox.Notice{}, fmt.Errorf("store: sandbox notice %s: %w", it.ID, err)
		}
		return issuersandbox.Notice{ID: it.ID, Body: it.Body, Attempts: it.Attempts, Due: due}, nil
	})
}

// DelayNotice sets notification id's attempts and due time, if it is
// still kept.
func (s *Store) DelayNotice(ctx context.Context, id string, attempts int, due time.Time) error {
	_, err := s.db.Update(ctx, "delay sandbox notice "+id, &dynamodb.UpdateItemInput{
		TableName:                aws.String(s.db.Table),
		Key:                      dynamo.Key(schema.SandboxNoticePK(id), schema.SandboxNoticeSK),
		UpdateExpression:         aws.String("SET #attempts = :attempts, #due = :due, #sk = :sk"),
		ConditionExpression:      aws.String("attribute_exists(PK)"),
		ExpressionAttributeNames: map[string]string{"#attempts": "attempts", "#due": "due", "#sk": schema.AttrGSI1SK},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":attempts": dynamo.Num(int64(attempts)), ":due": dynamo.Str(timestamp.Format(due)), ":sk": dynamo.Str(dueKey(due, id)),
		},
	})
	if dynamo.ConditionFailed(err) {
		return nil
	}
	return err
}

// The sandbox network's authorizations as decided:
//
//   - SANDBOX#ISSUER#AUTH#<authorization id>: the authorization, its
//     decision and its advice as the network made them (JSON), kept for
//     decisionRetention (the table's TTL, expires_at).
const (
	// decisionRetention is how long the network remembers an
	// authorization: longer than a request may be sent again with its
	// Idempotency-Key (24 hours).
	decisionRetention = 7 * 24 * time.Hour
)

var _ issuersandbox.DecisionStore = (*Store)(nil)

type decisionItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	Body      []byte `dynamodbav:"body"`
	ExpiresAt int64  `dynamodbav:"expires_at"`
}

// KeepDecision puts the authorization id as body encodes it, unless one
// is kept already, and returns the body kept.
func (s *Store) KeepDecision(ctx context.Context, id string, body []byte) ([]byte, error) {
	item, err := attributevalue.MarshalMap(decisionItem{
		PK: schema.SandboxDecisionPK(id), SK: schema.SandboxDecisionSK, Type: schema.KindSandboxDecision, ID: id, Body: body,
		ExpiresAt: time.Now().Add(decisionRetention).Unix(),
	})
	if err != nil {
		return nil, fmt.Errorf("store: marshal sandbox authorization %s: %w", id, err)
	}
	err = s.db.Put(ctx, "keep sandbox authorization "+id, &dynamodb.PutItemInput{
		TableName: aws.String(s.db.Table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if !dynamo.ConditionFailed(err) {
		return body, err
	}
	kept, found, err := s.Decision(ctx, id)
	if err == nil && !found {
		err = fmt.Errorf("store: sandbox authorization %s kept and gone", id)
	}
	return kept, err
}

// Decision returns the authorization id as kept, strongly consistent.
func (s *Store) Decision(ctx context.Context, id string) ([]byte, bool, error) {
	var it decisionItem
	found, err := s.db.Find(ctx, schema.SandboxDecisionPK(id), schema.SandboxDecisionSK, &it)
	if err != nil || !found {
		return nil, false, err
	}
	return it.Body, true, nil
}
