package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/companies"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

var _ companies.Store = (*Companies)(nil)

// Companies stores companies: one item per company in its own partition
// (COMPANY#<id>, COMPANY) and one lookup item per client_id (CLIENT#<client
// id>, CLIENT) written in the same transaction, so the token endpoint can
// find a company by client_id with strongly consistent reads.
type Companies struct{ db *DB }

// NewCompanies returns the companies store on db.
func NewCompanies(db *DB) *Companies { return &Companies{db: db} }

// companyItem is a company as stored.
type companyItem struct {
	PK         string    `dynamodbav:"PK"`
	SK         string    `dynamodbav:"SK"`
	Type       string    `dynamodbav:"type"`
	ID         string    `dynamodbav:"id"`
	Name       string    `dynamodbav:"name"`
	KYBStatus  string    `dynamodbav:"kyb_status"`
	IsActive   bool      `dynamodbav:"is_active"`
	ClientID   string    `dynamodbav:"client_id"`
	KeyHash    []byte    `dynamodbav:"key_hash"`
	KeyVersion int       `dynamodbav:"key_version"`
	WebhookURL string    `dynamodbav:"webhook_url,omitempty"`
	CardSlots  int       `dynamodbav:"card_slots"`
	CreatedAt  time.Time `dynamodbav:"created_at"`
	UpdatedAt  time.Time `dynamodbav:"updated_at"`
}

// clientItem maps a client_id to its company.
type clientItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	CompanyID string `dynamodbav:"company_id"`
}

func (it companyItem) company() companies.Company {
	return companies.Company{
		ID:         it.ID,
		Name:       it.Name,
		KYBStatus:  companies.KYBStatus(it.KYBStatus),
		IsActive:   it.IsActive,
		ClientID:   it.ClientID,
		KeyHash:    it.KeyHash,
		KeyVersion: it.KeyVersion,
		WebhookURL: it.WebhookURL,
		CardSlots:  it.CardSlots,
		CreatedAt:  it.CreatedAt,
		UpdatedAt:  it.UpdatedAt,
	}
}

// Create writes the company and its client_id lookup in one transaction;
// both must be new.
func (s *Companies) Create(ctx context.Context, c companies.Company) error {
	company, err := attributevalue.MarshalMap(companyItem{
		PK:         schema.CompanyPK(c.ID),
		SK:         schema.CompanySK,
		Type:       schema.KindCompany,
		ID:         c.ID,
		Name:       c.Name,
		KYBStatus:  string(c.KYBStatus),
		IsActive:   c.IsActive,
		ClientID:   c.ClientID,
		KeyHash:    c.KeyHash,
		KeyVersion: c.KeyVersion,
		WebhookURL: c.WebhookURL,
		CardSlots:  c.CardSlots,
		CreatedAt:  c.CreatedAt,
		UpdatedAt:  c.UpdatedAt,
	})
	if err != nil {
		return fmt.Errorf("store: marshal company: %w", err)
	}
	client, err := attributevalue.MarshalMap(clientItem{
		PK:        schema.ClientPK(c.ClientID),
		SK:        schema.ClientSK,
		Type:      schema.KindClient,
		CompanyID: c.ID,
	})
	if err != nil {
		return fmt.Errorf("store: marshal client: %w", err)
	}
	notExists := aws.String("attribute_not_exists(PK)")
	t := &Txn{}
	t.Add(schema.CompanyItem, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.db.Table), Item: company, ConditionExpression: notExists}})
	t.Add("client", types.TransactWriteItem{Put: &types.Put{TableName: aws.String(s.db.Table), Item: client, ConditionExpression: notExists}})
	return s.db.CommitOnce(ctx, "create company "+c.ID, t, func(context.Context, dynamo.Cancellation) error { return nil })
}

// Get reads company id with a strongly consistent read.
func (s *Companies) Get(ctx context.Context, id string) (companies.Company, error) {
	var it companyItem
	if err := s.db.Get(ctx, "company "+id, schema.CompanyPK(id), schema.CompanySK, &it, companies.ErrNotFound); err != nil {
		return companies.Company{}, err
	}
	return it.company(), nil
}

// noCompanyID is the nil UUID, never given to a company.
const noCompanyID = "00000000-0000-0000-0000-000000000000"

// GetByClientID reads the client_id lookup, then the company, both strongly
// consistent. An unknown client_id costs the same two reads.
func (s *Companies) GetByClientID(ctx context.Context, clientID string) (companies.Company, error) {
	out, err := s.db.Client.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(s.db.Table),
		Key:            dynamo.Key(schema.ClientPK(clientID), schema.ClientSK),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return companies.Company{}, fmt.Errorf("store: get client: %w", err)
	}
	if out.Item == nil {
		// Read a company that cannot exist, so an unknown client_id costs the
		// same two reads as a known one and its answer time tells nothing.
		if _, err := s.Get(ctx, noCompanyID); err != nil && !errors.Is(err, companies.ErrNotFound) {
			return companies.Company{}, err
		}
		return companies.Company{}, companies.ErrNotFound
	}
	var it clientItem
	if err := attributevalue.UnmarshalMap(out.Item, &it); err != nil {
		return companies.Company{}, fmt.Errorf("store: unmarshal client: %w", err)
	}
	return s.Get(ctx, it.CompanyID)
}

// Update sets the fields of p that are not nil, and updated_at.
func (s *Companies) Update(ctx context.Context, id string, p companies.Patch, now time.Time) (companies.Company, error) {
	u := NewAttrUpdate()
	if p.KYBStatus != nil {
		u.Set("kyb_status", string(*p.KYBStatus))
	}
	if p.IsActive != nil {
		u.Set("is_active", *p.IsActive)
	}
	switch {
	case p.WebhookURL == nil:
	case *p.WebhookURL == "":
		// DynamoDB Local refuses empty strings: a cleared address is absent.
		u.Remove("webhook_url")
	default:
		u.Set("webhook_url", *p.WebhookURL)
	}
	if p.CardSlots != nil {
		u.Set("card_slots", *p.CardSlots)
	}
	u.Set("updated_at", now)
	return s.update(ctx, id, u)
}

// RotateKey replaces the key hash and increments key_version.
func (s *Companies) RotateKey(ctx context.Context, id string, keyHash []byte, now time.Time) (companies.Company, error) {
	u := NewAttrUpdate()
	u.Set("key_hash", keyHash)
	u.Add("key_version", 1)
	u.Set("updated_at", now)
	return s.update(ctx, id, u)
}

func (s *Companies) update(ctx context.Context, id string, u *AttrUpdate) (companies.Company, error) {
	expr, names, values, err := u.Build()
	if err != nil {
		return companies.Company{}, fmt.Errorf("store: update company %s: %w", id, err)
	}
	out, err := s.db.Update(ctx, "update company "+id, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(schema.CompanyPK(id), schema.CompanySK),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("attribute_exists(PK)"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
		ReturnValues:              types.ReturnValueAllNew,
	})
	if dynamo.ConditionFailed(err) {
		return companies.Company{}, companies.ErrNotFound
	}
	if err != nil {
		return companies.Company{}, err
	}
	var it companyItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return companies.Company{}, fmt.Errorf("store: unmarshal company %s: %w", id, err)
	}
	return it.company(), nil
}
