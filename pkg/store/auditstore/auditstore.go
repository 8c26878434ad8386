// Package auditstore keeps the operators' audit trail (pkg/audit) in its
// own table, which it only ever adds to: a record is written with
// PutItem on the condition that no item has its key, and never updated or
// deleted. The template grants no function more than PutItem and Query on
// that table (docs/security.md, "The audit trail").
package auditstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"payments/pkg/audit"
	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

var _ audit.Store = (*Trail)(nil)

// Trail is the audit table.
type Trail struct{ db *store.DB }

// New returns the trail over db, the audit table (AUDIT_TABLE_NAME).
func New(db *store.DB) *Trail { return &Trail{db: db} }

// recordItem is an audit record's item.
type recordItem struct {
	PK        string            `dynamodbav:"PK"`
	SK        string            `dynamodbav:"SK"`
	Type      string            `dynamodbav:"type"`
	ID        string            `dynamodbav:"id"`
	At        string            `dynamodbav:"at"`
	RequestID string            `dynamodbav:"request_id,omitempty"`
	Phase     string            `dynamodbav:"phase"`
	Operator  string            `dynamodbav:"operator"`
	Action    string            `dynamodbav:"action"`
	Targets   map[string]string `dynamodbav:"targets,omitempty"`
	CompanyID string            `dynamodbav:"company_id,omitempty"`
	Request   string            `dynamodbav:"request,omitempty"`
	Answer    string            `dynamodbav:"answer,omitempty"`
	Status    int               `dynamodbav:"status,omitempty"`
	SourceIP  string            `dynamodbav:"source_ip,omitempty"`
	UserAgent string            `dynamodbav:"user_agent,omitempty"`
}

func (it recordItem) record() (audit.Record, error) {
	at, err := time.Parse(time.RFC3339Nano, it.At)
	if err != nil {
		return audit.Record{}, fmt.Errorf("store: audit record %s: at: %w", it.ID, err)
	}
	return audit.Record{
		ID: it.ID, At: at, RequestID: it.RequestID, Phase: it.Phase, Operator: it.Operator, Action: it.Action,
		Targets: it.Targets, CompanyID: it.CompanyID, Request: raw(it.Request), Answer: raw(it.Answer),
		Status: it.Status, SourceIP: it.SourceIP, UserAgent: it.UserAgent,
	}, nil
}

func raw(s string) json.RawMessage {
	if s == "" {
		return nil
	}
	return json.RawMessage(s)
}

// PutRecord adds r, refusing to replace a record of the same id.
func (s *Trail) PutRecord(ctx context.Context, r audit.Record) error {
	item, err := attributevalue.MarshalMap(recordItem{
		PK: schema.AuditPK, SK: schema.AuditSK(r.ID), Type: schema.KindAudit,
		ID: r.ID, At: r.At.UTC().Format(time.RFC3339Nano), RequestID: r.RequestID, Phase: r.Phase,
		Operator: r.Operator, Action: r.Action, Targets: r.Targets, CompanyID: r.CompanyID,
		Request: string(r.Request), Answer: string(r.Answer), Status: r.Status,
		SourceIP: r.SourceIP, UserAgent: r.UserAgent,
	})
	if err != nil {
		return fmt.Errorf("store: encode audit record: %w", err)
	}
	return s.db.Put(ctx, "put audit record", &dynamodb.PutItemInput{
		TableName:           aws.String(s.db.Table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
}

// Records reads page p of the records that match f, newest first,
// strongly consistent.
func (s *Trail) Records(ctx context.Context, f audit.Filter, p page.Request) (page.Result[audit.Record], error) {
	lo, hi := dynamo.TimeRange(schema.AuditSKPrefix, f.From, f.To)
	l := dynamo.Listing{
		PKAttr: schema.AttrPK, SKAttr: schema.AttrSK, PK: schema.AuditPK,
		Prefix: schema.AuditSKPrefix, Lo: lo, Hi: hi, Consistent: true,
	}
	for _, c := range [][2]string{{"operator", f.Operator}, {"company_id", f.CompanyID}, {"action", f.Action}} {
		if c[1] != "" {
			l.Filter.Equal(c[0], c[1])
		}
	}
	rows, total, next, err := s.db.ReadPage(ctx, l, p)
	if err != nil {
		return page.Result[audit.Record]{}, fmt.Errorf("store: list audit records: %w", err)
	}
	return dynamo.PageOf(rows, total, next, recordItem.record)
}
