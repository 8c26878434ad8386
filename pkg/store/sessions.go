package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/identity"
	"payments/pkg/sessions"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

var _ sessions.Store = (*Sessions)(nil)

// Sessions keeps the company dashboard's sessions, each in its company's
// partition, deleted by DynamoDB's TTL once expired (schema.AttrExpiresAt)
// or at once by sign-out.
type Sessions struct{ db *DB }

// NewSessions returns the sessions' store over db.
func NewSessions(db *DB) *Sessions { return &Sessions{db: db} }

// sessionItem is a session's record.
type sessionItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	Subject   string `dynamodbav:"subject"`
	Email     string `dynamodbav:"email"`
	Role      string `dynamodbav:"role"`
	CreatedAt string `dynamodbav:"created_at"`
	// ExpiresAt is the TTL attribute: epoch seconds.
	ExpiresAt int64 `dynamodbav:"expires_at"`
}

// CreateSession writes s, refusing to overwrite a session of the same id.
func (s *Sessions) CreateSession(ctx context.Context, in sessions.Session) error {
	item, err := attributevalue.MarshalMap(sessionItem{
		PK: schema.CompanyPK(in.CompanyID), SK: schema.DashboardSessionSK(in.ID), Type: schema.KindDashboardSession,
		Subject: in.Subject, Email: in.Email, Role: string(in.Role),
		CreatedAt: in.Created.UTC().Format(time.RFC3339), ExpiresAt: in.Expires.Unix(),
	})
	if err != nil {
		return fmt.Errorf("store: encode session: %w", err)
	}
	return s.db.Put(ctx, "create dashboard session", &dynamodb.PutItemInput{
		TableName:           aws.String(s.db.Table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
}

// Session reads session id of the company, or sessions.ErrNotFound.
func (s *Sessions) Session(ctx context.Context, companyID, id string) (sessions.Session, error) {
	var it sessionItem
	if err := s.db.Get(ctx, "dashboard session", schema.CompanyPK(companyID), schema.DashboardSessionSK(id), &it, sessions.ErrNotFound); err != nil {
		return sessions.Session{}, err
	}
	created, _ := time.Parse(time.RFC3339, it.CreatedAt)
	return sessions.Session{
		ID: id, CompanyID: companyID, Subject: it.Subject, Email: it.Email, Role: identity.Role(it.Role),
		Created: created, Expires: time.Unix(it.ExpiresAt, 0).UTC(),
	}, nil
}

// DeleteSession deletes session id of the company.
func (s *Sessions) DeleteSession(ctx context.Context, companyID, id string) error {
	_, err := s.db.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(s.db.Table),
		Key:       dynamo.Key(schema.CompanyPK(companyID), schema.DashboardSessionSK(id)),
	})
	if err != nil {
		return fmt.Errorf("store: delete dashboard session: %w", err)
	}
	return nil
}

// DeleteSessionsOf deletes every session of the company's person email:
// the company's sessions are read by key prefix (few: its people's
// sign-ins of the last hours), keeping email's.
func (s *Sessions) DeleteSessionsOf(ctx context.Context, companyID, email string) error {
	p := dynamodb.NewQueryPaginator(s.db.Client, &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :sk)"),
		FilterExpression:       aws.String("email = :email"),
		ProjectionExpression:   aws.String("SK"),
		ConsistentRead:         aws.Bool(true),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(schema.CompanyPK(companyID)), ":sk": dynamo.Str(schema.DashboardSessionSKPrefix), ":email": dynamo.Str(email),
		},
	})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return fmt.Errorf("store: query the dashboard sessions of %s: %w", companyID, err)
		}
		for _, item := range page.Items {
			id := strings.TrimPrefix(dynamo.StringAttr(item, "SK"), schema.DashboardSessionSKPrefix)
			if err := s.DeleteSession(ctx, companyID, id); err != nil {
				return err
			}
		}
	}
	return nil
}
