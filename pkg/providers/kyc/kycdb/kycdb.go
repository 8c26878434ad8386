// Package kycdb is the sandbox verifier's own store (kycsandbox.Store) in
// DynamoDB: the simulated verifier keeps its verifications in partitions of
// its own, as a remote verifier would.
package kycdb

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"payments/pkg/providers/kyc"
	"payments/pkg/providers/kyc/kycsandbox"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// Store keeps the sandbox verifier's verifications in partitions of
// their own (SANDBOX#KYC#<our customer id>), apart from our records, as a
// remote verifier's would be.
type Store struct{ db *dynamo.DB }

var _ kycsandbox.Store = (*Store)(nil)

// New returns the sandbox verifier's store on db.
func New(db *dynamo.DB) *Store { return &Store{db: db} }

type sandboxKYCItem struct {
	PK        string            `dynamodbav:"PK"`
	SK        string            `dynamodbav:"SK"`
	Type      string            `dynamodbav:"type"`
	ID        string            `dynamodbav:"id"`
	Reference string            `dynamodbav:"reference"`
	Status    string            `dynamodbav:"status"`
	Reason    string            `dynamodbav:"reason,omitempty"`
	Digests   map[string]string `dynamodbav:"digests"`
	CreatedAt string            `dynamodbav:"created_at"`
}

// PutVerification records r unless its reference has a verification, and
// returns the verification of the reference.
func (s *Store) PutVerification(ctx context.Context, r kycsandbox.Record) (kycsandbox.Record, error) {
	item, err := attributevalue.MarshalMap(sandboxKYCItem{
		PK: schema.SandboxKYCPK(r.Reference), SK: schema.SandboxKYCSK, Type: schema.KindSandboxKYC,
		ID: r.ID, Reference: r.Reference, Status: string(r.Status), Reason: r.Reason, Digests: r.Digests,
		CreatedAt: timestamp.Format(r.CreatedAt),
	})
	if err != nil {
		return kycsandbox.Record{}, fmt.Errorf("store: marshal sandbox verification: %w", err)
	}
	err = s.db.Put(ctx, "put sandbox verification "+r.Reference, &dynamodb.PutItemInput{
		TableName: aws.String(s.db.Table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	switch {
	case dynamo.ConditionFailed(err):
		return s.verification(ctx, r.Reference)
	case err != nil:
		return kycsandbox.Record{}, err
	}
	return r, nil
}

func (s *Store) verification(ctx context.Context, ref string) (kycsandbox.Record, error) {
	var it sandboxKYCItem
	err := s.db.Get(ctx, "sandbox verification "+ref, schema.SandboxKYCPK(ref), schema.SandboxKYCSK, &it, fmt.Errorf("store: sandbox verification %s vanished", ref))
	if err != nil {
		return kycsandbox.Record{}, err
	}
	at, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return kycsandbox.Record{}, fmt.Errorf("store: sandbox verification %s: %w", ref, err)
	}
	return kycsandbox.Record{
		ID: it.ID, Reference: it.Reference, Status: kyc.Status(it.Status), Reason: it.Reason,
		Digests: it.Digests, CreatedAt: at,
	}, nil
}
