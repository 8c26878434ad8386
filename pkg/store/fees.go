package store

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"payments/pkg/fees"
	"payments/pkg/store/schema"
)

// Fees keeps each company's fee schedule in one item under the company.
type Fees struct{ db *DB }

var _ fees.Store = (*Fees)(nil)

// NewFees returns the fee schedule store on db.
func NewFees(db *DB) *Fees { return &Fees{db: db} }

type feeScheduleItem struct {
	PK    string      `dynamodbav:"PK"`
	SK    string      `dynamodbav:"SK"`
	Rules []fees.Rule `dynamodbav:"rules"`
}

// FeeSchedule returns the company's schedule and whether one was set.
func (f *Fees) FeeSchedule(ctx context.Context, companyID string) (fees.Schedule, bool, error) {
	var it feeScheduleItem
	found, err := f.db.Find(ctx, schema.CompanyPK(companyID), schema.FeeScheduleSK, &it)
	if err != nil {
		return fees.Schedule{}, false, fmt.Errorf("store: get fee schedule: %w", err)
	}
	if !found {
		return fees.Schedule{}, false, nil
	}
	return fees.Schedule{Rules: it.Rules}, true, nil
}

// PutFeeSchedule replaces the company's schedule.
func (f *Fees) PutFeeSchedule(ctx context.Context, companyID string, s fees.Schedule) error {
	rules := s.Rules
	if rules == nil {
		rules = []fees.Rule{}
	}
	item, err := attributevalue.MarshalMap(feeScheduleItem{PK: schema.CompanyPK(companyID), SK: schema.FeeScheduleSK, Rules: rules})
	if err != nil {
		return fmt.Errorf("store: encode fee schedule: %w", err)
	}
	return f.db.Put(ctx, "put fee schedule of "+companyID, &dynamodb.PutItemInput{TableName: aws.String(f.db.Table), Item: item})
}
