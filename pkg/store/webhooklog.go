package store

import (
	"context"
	"fmt"
	"sort"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/events"
	"payments/pkg/page"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/webhooks"
)

// The delivery log's reads: an event with its deliveries, and pages of
// them.

// Record returns one of the company's events with its deliveries, read in
// one strongly consistent query; events.ErrNotFound when absent.
func (s *Webhooks) Record(ctx context.Context, companyID, eventID string) (webhooks.Record, error) {
	p := dynamodb.NewQueryPaginator(s.db.Client, &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)},
			":sk": &types.AttributeValueMemberS{Value: schema.EventSK(eventID)},
		},
		ConsistentRead: aws.Bool(true),
	})
	var event map[string]types.AttributeValue
	var deliveries []map[string]types.AttributeValue
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		if err != nil {
			return webhooks.Record{}, fmt.Errorf("store: query event %s: %w", eventID, err)
		}
		for _, item := range out.Items {
			switch dynamo.StringAttr(item, schema.AttrType) {
			case schema.KindEvent:
				if dynamo.StringAttr(item, schema.AttrSK) == schema.EventSK(eventID) {
					event = item
				}
			case schema.KindWebhookDelivery:
				deliveries = append(deliveries, item)
			}
		}
	}
	if event == nil {
		return webhooks.Record{}, events.ErrNotFound
	}
	return recordOf(event, deliveries)
}

// Records reads page p of the company's events that match q, newest first,
// each with its deliveries, strongly consistent (ReadPage). The dates become
// a range of sort keys (event ids are UUID v7 of their creation time);
// deliveries are stored right after their event and are read with it; the
// kind is a FilterExpression. The status is decided by the deliveries
// (webhooks.Record.Status), which no FilterExpression can do: it is applied
// in process, and with it the count and the skip read the events and
// deliveries projected to what decides a status.
func (s *Webhooks) Records(ctx context.Context, companyID string, q webhooks.Query, p page.Request) (page.Result[webhooks.Record], error) {
	lo, hi := dynamo.TimeRange(schema.EventSKPrefix, q.From, q.To)
	l := dynamo.Listing{
		PKAttr: schema.AttrPK, SKAttr: schema.AttrSK, PK: schema.CompanyPK(companyID),
		Prefix: schema.EventSKPrefix, Lo: lo, Hi: hi, Consistent: true,
		KindAttr: schema.AttrType, MemberKind: schema.KindWebhookDelivery,
	}
	l.Filter.Equal(schema.AttrType, schema.KindEvent)
	if q.Kind != "" {
		l.Filter.Equal("event", string(q.Kind))
	}
	if q.Status != "" {
		l.Match = func(r dynamo.Row) (bool, error) {
			st, err := logStatus(r)
			return st == q.Status, err
		}
		l.MatchAttrs = []string{"dispatched_at", "destination", "round", "status"}
	}
	rows, total, next, err := s.db.ReadPage(ctx, l, p)
	if err != nil {
		return page.Result[webhooks.Record]{}, fmt.Errorf("store: list events: %w", err)
	}
	out := page.Result[webhooks.Record]{Items: make([]webhooks.Record, 0, len(rows)), Total: total, Next: next}
	for _, r := range rows {
		rec, err := recordOf(r.Item, r.Members)
		if err != nil {
			return page.Result[webhooks.Record]{}, err
		}
		out.Items = append(out.Items, rec)
	}
	return out, nil
}

// Events reads page p of the company's events that match q, newest first,
// without their deliveries, strongly consistent (ReadPage): the dates are a
// range of sort keys, the kind (or prefix of kinds) a FilterExpression,
// like the item type that leaves the deliveries out.
func (s *Webhooks) Events(ctx context.Context, companyID string, q webhooks.EventQuery, p page.Request) (page.Result[events.Event], error) {
	lo, hi := dynamo.TimeRange(schema.EventSKPrefix, q.From, q.To)
	l := dynamo.Listing{
		PKAttr: schema.AttrPK, SKAttr: schema.AttrSK, PK: schema.CompanyPK(companyID),
		Prefix: schema.EventSKPrefix, Lo: lo, Hi: hi, Consistent: true,
	}
	l.Filter.Equal(schema.AttrType, schema.KindEvent)
	switch {
	case q.Kind != "":
		l.Filter.Equal("event", string(q.Kind))
	case q.Prefix != "":
		l.Filter.BeginsWith("event", q.Prefix)
	}
	rows, total, next, err := s.db.ReadPage(ctx, l, p)
	if err != nil {
		return page.Result[events.Event]{}, fmt.Errorf("store: list events: %w", err)
	}
	return dynamo.PageOf(rows, total, next, eventItem.event)
}

// logStatus returns the delivery-log status of an event row, from the
// attributes that decide it (the projection of Records' match).
func logStatus(r dynamo.Row) (webhooks.Status, error) {
	var ev struct {
		DispatchedAt string `dynamodbav:"dispatched_at"`
	}
	if err := attributevalue.UnmarshalMap(r.Item, &ev); err != nil {
		return "", fmt.Errorf("store: decode event: %w", err)
	}
	rec := webhooks.Record{Dispatched: ev.DispatchedAt != ""}
	for _, m := range r.Members {
		var d struct {
			Destination string `dynamodbav:"destination"`
			Round       int    `dynamodbav:"round"`
			Status      string `dynamodbav:"status"`
		}
		if err := attributevalue.UnmarshalMap(m, &d); err != nil {
			return "", fmt.Errorf("store: decode delivery: %w", err)
		}
		rec.Deliveries = append(rec.Deliveries, webhooks.Delivery{
			Destination: webhooks.Destination(d.Destination), Round: d.Round, Status: webhooks.Status(d.Status),
		})
	}
	return rec.Status(), nil
}

// recordOf decodes an event item and the items of its deliveries into a
// record, deliveries ordered by round, then webhook before notify_url.
func recordOf(event map[string]types.AttributeValue, deliveries []map[string]types.AttributeValue) (webhooks.Record, error) {
	var it eventItem
	if err := attributevalue.UnmarshalMap(event, &it); err != nil {
		return webhooks.Record{}, fmt.Errorf("store: decode event: %w", err)
	}
	e, err := it.event()
	if err != nil {
		return webhooks.Record{}, err
	}
	rec := webhooks.Record{Event: e, Dispatched: dynamo.StringAttr(event, "dispatched_at") != ""}
	ds, err := dynamo.DecodeAll(deliveries, deliveryItem.delivery)
	if err != nil {
		return webhooks.Record{}, err
	}
	sort.Slice(ds, func(a, b int) bool {
		if ds[a].Round != ds[b].Round {
			return ds[a].Round < ds[b].Round
		}
		return ds[a].Destination > ds[b].Destination // webhook before notify_url
	})
	if len(ds) > 0 {
		rec.Deliveries = ds
	}
	return rec, nil
}
