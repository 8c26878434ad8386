package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/events"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
)

// Event sequences. Every event carries its number among the events about
// its object (events.Event.Object), 1, 2, 3…, assigned in the transaction
// of the change that emits it. The object's counter, in its company's
// partition (COMPANY#<id>, SEQ#<object id>), holds seq, the number of the
// last event about it. A transaction that emits events reads the counters
// of their objects (strongly consistent) at each try, numbers its events
// after them, and writes each counter with the last number, on the
// condition that it is still what was read (or still absent): two changes
// of one object cannot take the same number, and the one that loses is
// built again from fresh reads (DB.Commit). A transaction that creates the
// object (Txn.Creates) knows its counter absent without reading it; a debt
// keeps its counter on its own items (Txn.Counts); an object made and
// completed at once needs none (Txn.Finishes). The counter is written
// as a whole (a Put), so writing it needs no permission beyond the event's
// own.

// sequenceAttempts bounds the tries of a write whose counter another change
// of the object moved first. Each such race lost means that change
// committed, so among n concurrent changes of one object each commits
// within n tries; the store's policy (contention.Retry) spaces them, and
// stops early when the context's deadline leaves no time.
const sequenceAttempts = 100

// errSequenceRaced is a write whose counter another change of the object
// moved between its read and the commit.
var errSequenceRaced = errors.New("store: another change of the object took the event's number")

// objectEvent is an event a transaction emits, under its item name.
type objectEvent struct {
	name string
	ev   events.Event
}

// objectKey is an object of a company.
type objectKey struct{ companyID, object string }

// counterItem is the counter of the events about an object.
type counterItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	CompanyID string `dynamodbav:"company_id"`
	Object    string `dynamodbav:"object"`
	Seq       int64  `dynamodbav:"seq"`
}

// AddEvent adds ev to t under name, the one way a change emits an event:
// each try of the write numbers it and adds its item (eventPut) and its
// object's counter (sequenced).
func (t *Txn) AddEvent(name string, ev events.Event) {
	t.events = append(t.events, objectEvent{name, ev})
}

// Counts records that the counter of object is kept by items t writes
// itself, under conditions of their own that no other change of the object
// can pass (a debt's record and marker, moneystore's debts.go): the events
// about it in t are numbered from read+1 and no counter item is written;
// those items hold read plus the number of those events (EventsAbout).
func (t *Txn) Counts(object string, read int64) {
	if t.counted == nil {
		t.counted = map[string]int64{}
	}
	t.counted[object] = read
}

// Finishes records that t creates object id and emits every event there
// will ever be about it (a conversion, a deposit, a transfer: made and
// completed at once): they are numbered from 1 and no counter is kept,
// which spares the transaction an item.
func (t *Txn) Finishes(id string) { t.Counts(id, 0) }

// EventsAbout returns the number of the events about object that t emits
// so far.
func (t *Txn) EventsAbout(object string) int64 {
	var n int64
	for _, e := range t.events {
		if e.ev.Object == object {
			n++
		}
	}
	return n
}

// Creates records that t creates each object of ids, as a new item on the
// condition that it does not exist: no event about it can precede t's, so
// its counter is not read (one read less on the paths that make objects).
// Were it ever wrong, the counter's condition would fail at every try and
// the write end in contention.ErrConflict: never a number taken twice.
func (t *Txn) Creates(ids ...string) {
	if t.created == nil {
		t.created = map[string]bool{}
	}
	for _, id := range ids {
		t.created[id] = true
	}
}

// Len returns the number of items t will hold when written: its own, and
// for its events, one item each and one counter per object.
func (t *Txn) Len() int {
	objects := map[objectKey]bool{}
	for _, e := range t.events {
		if _, counted := t.counted[e.ev.Object]; !counted {
			objects[objectKey{e.ev.CompanyID, e.ev.Object}] = true
		}
	}
	return t.Txn.Len() + len(t.events) + len(objects)
}

// sequenced returns the items of t as one try writes them: t's own, each
// of its events numbered after its object's counter as read now, and the
// counters, named "seq<n>", set to the last number on the condition that
// they are still what was read. Several events about one object in t take
// consecutive numbers and one counter write. t itself is unchanged, so a
// transaction built once (CommitOnce) is numbered afresh at each try.
func (db *DB) sequenced(ctx context.Context, t *Txn) (*dynamo.Txn, error) {
	if len(t.events) == 0 {
		return &t.Txn, nil
	}
	out := t.Txn.Clone()
	read, last := map[objectKey]int64{}, map[objectKey]int64{}
	var objects []objectKey
	for _, e := range t.events {
		k := objectKey{e.ev.CompanyID, e.ev.Object}
		if k.object == "" {
			return nil, fmt.Errorf("store: event %s (%s) names no object", e.ev.ID, e.ev.Kind)
		}
		if _, ok := read[k]; !ok {
			n, counted := t.counted[k.object]
			if !counted && !t.created[k.object] {
				var err error
				if n, err = db.counter(ctx, k); err != nil {
					return nil, err
				}
			}
			read[k], last[k] = n, n
			if !counted {
				objects = append(objects, k)
			}
		}
		last[k]++
		ev, err := e.ev.WithSequence(last[k])
		if err != nil {
			return nil, fmt.Errorf("store: %w", err)
		}
		put, err := eventPut(db.Table, ev)
		if err != nil {
			return nil, err
		}
		out.Add(e.name, put)
	}
	for i, k := range objects {
		put, err := db.counterPut(k, read[k], last[k])
		if err != nil {
			return nil, err
		}
		out.Add(counterName(i), put)
	}
	return out, nil
}

// counter reads the number of the last event about k, 0 when none.
func (db *DB) counter(ctx context.Context, k objectKey) (int64, error) {
	var it counterItem
	if _, err := db.Find(ctx, schema.CompanyPK(k.companyID), schema.SequenceSK(k.object), &it); err != nil {
		return 0, fmt.Errorf("store: read the event sequence of %s: %w", k.object, err)
	}
	return it.Seq, nil
}

// counterPut returns the item that sets the counter of k to seq, on the
// condition that it is still read (absent when read is 0).
func (db *DB) counterPut(k objectKey, read, seq int64) (types.TransactWriteItem, error) {
	item, err := attributevalue.MarshalMap(counterItem{
		PK: schema.CompanyPK(k.companyID), SK: schema.SequenceSK(k.object), Type: schema.KindSequence,
		CompanyID: k.companyID, Object: k.object, Seq: seq,
	})
	if err != nil {
		return types.TransactWriteItem{}, fmt.Errorf("store: encode event sequence: %w", err)
	}
	put := &types.Put{TableName: aws.String(db.Table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)")}
	if read > 0 {
		put.ConditionExpression = aws.String("seq = :read")
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":read": dynamo.Num(read)}
	}
	return types.TransactWriteItem{Put: put}, nil
}

// counterName names the counter of the i-th object of a transaction.
func counterName(i int) string { return "seq" + strconv.Itoa(i) }

// counterRaced reports whether a counter of a cancelled transaction failed
// its condition: another change of the same object took the number first.
func counterRaced(k dynamo.Cancellation) bool {
	for name := range k {
		if rest, ok := strings.CutPrefix(name, "seq"); ok && k.Failed(name) {
			if _, err := strconv.Atoi(rest); err == nil {
				return true
			}
		}
	}
	return false
}

// ErrEventKept is an event that can no longer be taken back: published or
// dispatched already, or followed by another event about its object.
var ErrEventKept = errors.New("store: event kept")

// EventWithdrawal returns the items that take back the company's event id,
// none when it does not exist: the event is deleted on the condition that
// it is still unpublished and undispatched (the webhook worker marks an
// event dispatched before it sends anything), and its number given back,
// so that the numbers of its object stay 1, 2, … n: an object whose
// counter is kept moves back by one, on the condition that the event is
// still its last. ErrEventKept when the event is published or dispatched
// already, or is not its object's last.
func (db *DB) EventWithdrawal(ctx context.Context, companyID, id string) ([]types.TransactWriteItem, error) {
	var ev eventItem
	found, err := db.Find(ctx, schema.CompanyPK(companyID), schema.EventSK(id), &ev)
	switch {
	case err != nil:
		return nil, fmt.Errorf("store: read event %s to take it back: %w", id, err)
	case !found:
		return nil, nil
	case ev.Published || ev.DispatchedAt != "":
		// Queued, maybe delivered: a message can be sent before the
		// event is marked published, never before it is dispatched.
		return nil, ErrEventKept
	}
	items := []types.TransactWriteItem{{Delete: &types.Delete{
		TableName:                 aws.String(db.Table),
		Key:                       dynamo.Key(schema.CompanyPK(companyID), schema.EventSK(id)),
		ConditionExpression:       aws.String("#pub = :false AND attribute_not_exists(#disp)"),
		ExpressionAttributeNames:  map[string]string{"#pub": "published", "#disp": "dispatched_at"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":false": &types.AttributeValueMemberBOOL{Value: false}},
	}}}
	k := objectKey{companyID, ev.Object}
	last, err := db.counter(ctx, k)
	switch {
	case err != nil:
		return nil, err
	case last == 0: // an object whose counter is not kept
	case last != ev.Sequence:
		return nil, ErrEventKept
	default:
		back, err := db.counterPut(k, last, last-1)
		if err != nil {
			return nil, err
		}
		items = append(items, back)
	}
	return items, nil
}

// FirstEvent returns the items of e as the first event about its object,
// numbered 1, and of the object's counter at 1, for a writer that puts new
// objects without a transaction (dynamo.DB.PutAll): no event about the
// object may precede e.
func (db *DB) FirstEvent(e events.Event) (event, counter map[string]types.AttributeValue, err error) {
	ev, err := e.WithSequence(1)
	if err != nil {
		return nil, nil, fmt.Errorf("store: %w", err)
	}
	put, err := eventPut(db.Table, ev)
	if err != nil {
		return nil, nil, err
	}
	count, err := db.counterPut(objectKey{ev.CompanyID, ev.Object}, 0, 1)
	if err != nil {
		return nil, nil, err
	}
	return put.Put.Item, count.Put.Item, nil
}
