package issuerdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

// The sandbox network's statement log (issuersandbox.StatementLog), kept for
// statementRetention (the table's TTL, expires_at):
//
//   - SANDBOX#ISSUER#STMT#<authorization id>, AUTHORIZATION: an
//     authorization as the network decided it, with what it holds now;
//     in GSI1 under SANDBOX#ISSUER#STATEMENT#AUTHORIZATIONS, sorted by
//     "<created>#<id>";
//   - SANDBOX#ISSUER#STMT#<transaction id>, TRANSACTION: a settlement or
//     a refund the network reported; in GSI1 under
//     SANDBOX#ISSUER#STATEMENT#TRANSACTIONS, sorted the same way;
//   - SANDBOX#ISSUER#STMTNOTE#<event id>: the claim of the notification
//     that logged a transaction or a release, naming the transaction
//     (of), so that a notification sent again logs nothing more.
//
// One partition per list serves every company's cards: a sandbox network's
// transactions are few.
const (
	// statementRetention is how long the log keeps an entry: past any
	// reconciliation window and any hold.
	statementRetention = 30 * 24 * time.Hour
)

var _ issuersandbox.StatementLog = (*Store)(nil)

// statementKey is the GSI1 sort key of an entry created at at.
func statementKey(at time.Time, id string) string { return timestamp.Format(at) + "#" + id }

type merchantItem struct {
	Name    string `dynamodbav:"name"`
	City    string `dynamodbav:"city"`
	Country string `dynamodbav:"country"`
}

func merchantOf(m *issuer.Merchant) *merchantItem {
	if m == nil {
		return nil
	}
	return &merchantItem{Name: m.Name, City: m.City, Country: m.Country}
}

func (m *merchantItem) merchant() *issuer.Merchant {
	if m == nil {
		return nil
	}
	return &issuer.Merchant{Name: m.Name, City: m.City, Country: m.Country}
}

type statementAuthorizationItem struct {
	PK        string        `dynamodbav:"PK"`
	SK        string        `dynamodbav:"SK"`
	GSI1PK    string        `dynamodbav:"GSI1PK"`
	GSI1SK    string        `dynamodbav:"GSI1SK"`
	Type      string        `dynamodbav:"type"`
	ID        string        `dynamodbav:"id"`
	CardID    string        `dynamodbav:"card_id"`
	Reference string        `dynamodbav:"reference"`
	Kind      string        `dynamodbav:"kind"`
	Approved  bool          `dynamodbav:"approved"`
	Status    string        `dynamodbav:"status"`
	Held      int64         `dynamodbav:"held"`
	Merchant  *merchantItem `dynamodbav:"merchant,omitempty"`
	CreatedAt string        `dynamodbav:"created_at"`
	ExpiresAt int64         `dynamodbav:"expires_at"`
}

func (it statementAuthorizationItem) authorization() (issuer.StatementAuthorization, error) {
	at, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return issuer.StatementAuthorization{}, fmt.Errorf("store: sandbox statement authorization %s: %w", it.ID, err)
	}
	return issuer.StatementAuthorization{ID: it.ID, CardID: it.CardID, Reference: it.Reference, Kind: it.Kind,
		Approved: it.Approved, Status: it.Status, Held: it.Held, Merchant: it.Merchant.merchant(), CreatedAt: at}, nil
}

type statementTransactionItem struct {
	PK              string        `dynamodbav:"PK"`
	SK              string        `dynamodbav:"SK"`
	GSI1PK          string        `dynamodbav:"GSI1PK"`
	GSI1SK          string        `dynamodbav:"GSI1SK"`
	Type            string        `dynamodbav:"type"`
	ID              string        `dynamodbav:"id"`
	TxType          string        `dynamodbav:"tx_type"`
	CardID          string        `dynamodbav:"card_id"`
	Reference       string        `dynamodbav:"reference"`
	AuthorizationID string        `dynamodbav:"authorization_id,omitempty"`
	Amount          int64         `dynamodbav:"amount"`
	Merchant        *merchantItem `dynamodbav:"merchant,omitempty"`
	CreatedAt       string        `dynamodbav:"created_at"`
	ExpiresAt       int64         `dynamodbav:"expires_at"`
}

func (it statementTransactionItem) transaction() (issuer.StatementTransaction, error) {
	at, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return issuer.StatementTransaction{}, fmt.Errorf("store: sandbox statement transaction %s: %w", it.ID, err)
	}
	return issuer.StatementTransaction{ID: it.ID, Type: it.TxType, CardID: it.CardID, Reference: it.Reference,
		AuthorizationID: it.AuthorizationID, Amount: it.Amount, Merchant: it.Merchant.merchant(), CreatedAt: at}, nil
}

type statementNoteItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	Of        string `dynamodbav:"of,omitempty"`
	ExpiresAt int64  `dynamodbav:"expires_at"`
}

// expiry is the TTL of an entry created at at.
func expiry(at time.Time) int64 { return at.Add(statementRetention).Unix() }

// LogAuthorization puts a unless it is kept already.
func (s *Store) LogAuthorization(ctx context.Context, a issuer.StatementAuthorization) error {
	item, err := attributevalue.MarshalMap(statementAuthorizationItem{
		PK: schema.SandboxStatementPK(a.ID), SK: schema.SandboxStatementAuthorizationSK, GSI1PK: schema.SandboxAuthorizationsGSI1PK, GSI1SK: statementKey(a.CreatedAt, a.ID),
		Type: schema.KindSandboxStatementAuthorization, ID: a.ID, CardID: a.CardID, Reference: a.Reference, Kind: a.Kind,
		Approved: a.Approved, Status: a.Status, Held: a.Held, Merchant: merchantOf(a.Merchant),
		CreatedAt: timestamp.Format(a.CreatedAt), ExpiresAt: expiry(a.CreatedAt),
	})
	if err != nil {
		return fmt.Errorf("store: marshal sandbox statement authorization %s: %w", a.ID, err)
	}
	err = s.db.Put(ctx, "log sandbox authorization "+a.ID, &dynamodb.PutItemInput{
		TableName: aws.String(s.db.Table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	})
	if dynamo.ConditionFailed(err) {
		return nil
	}
	return err
}

// errNoteTaken is a notification logged already.
var errNoteTaken = errors.New("store: sandbox statement notification logged")

// LogTransaction puts t and the claim of eventID, and moves what t's
// authorization holds, in one transaction from a fresh read of the
// authorization; a notification logged already returns its transaction.
// A transaction without a merchant takes its authorization's.
func (s *Store) LogTransaction(ctx context.Context, eventID string, t issuer.StatementTransaction, closes bool) (issuer.StatementTransaction, error) {
	err := s.db.Write(ctx, "log sandbox transaction "+t.ID, func(ctx context.Context) (*dynamo.Txn, error) {
		tx := &dynamo.Txn{}
		if err := s.addNew(tx, "note", statementNoteItem{PK: schema.SandboxStatementNotePK(eventID), SK: schema.SandboxStatementNoteSK,
			Type: schema.KindSandboxStatementNote, Of: t.ID, ExpiresAt: expiry(t.CreatedAt)}); err != nil {
			return nil, err
		}
		a, found, err := s.statementAuthorization(ctx, t.AuthorizationID)
		if err != nil {
			return nil, err
		}
		if found && t.Merchant == nil {
			t.Merchant = a.Merchant.merchant()
		}
		if found && t.Type == issuer.NotifySettlement && a.Status == issuer.AuthorizationPending {
			held := max(a.Held-t.Amount, 0)
			if closes {
				held = 0
			}
			status := a.Status
			if held == 0 {
				status = issuer.AuthorizationClosed
			}
			tx.Add("authorization", s.holdUpdate(a, held, status))
		}
		err = s.addNew(tx, "transaction", statementTransactionItem{
			PK: schema.SandboxStatementPK(t.ID), SK: schema.SandboxStatementTransactionSK, GSI1PK: schema.SandboxTransactionsGSI1PK, GSI1SK: statementKey(t.CreatedAt, t.ID),
			Type: schema.KindSandboxStatementTransaction, ID: t.ID, TxType: t.Type, CardID: t.CardID, Reference: t.Reference,
			AuthorizationID: t.AuthorizationID, Amount: t.Amount, Merchant: merchantOf(t.Merchant),
			CreatedAt: timestamp.Format(t.CreatedAt), ExpiresAt: expiry(t.CreatedAt),
		})
		return tx, err
	}, noteRefused)
	if !errors.Is(err, errNoteTaken) {
		return t, err
	}
	var note statementNoteItem
	if err := s.getExisting(ctx, schema.SandboxStatementNotePK(eventID), schema.SandboxStatementNoteSK, &note); err != nil {
		return issuer.StatementTransaction{}, err
	}
	var kept statementTransactionItem
	if err := s.getExisting(ctx, schema.SandboxStatementPK(note.Of), schema.SandboxStatementTransactionSK, &kept); err != nil {
		return issuer.StatementTransaction{}, err
	}
	return kept.transaction()
}

// LogReversal releases amount (0: all) of authorization authorizationID's
// hold and claims eventID, in one transaction from a fresh read; released
// in full, the authorization is ended (its status: REVERSED or EXPIRED).
func (s *Store) LogReversal(ctx context.Context, eventID, authorizationID string, amount int64, ended string) error {
	err := s.db.Write(ctx, "log sandbox reversal of "+authorizationID, func(ctx context.Context) (*dynamo.Txn, error) {
		a, found, err := s.statementAuthorization(ctx, authorizationID)
		switch {
		case err != nil:
			return nil, err
		case !found:
			return nil, errNoAuthorization
		}
		tx := &dynamo.Txn{}
		at, err := timestamp.Parse(a.CreatedAt)
		if err != nil {
			return nil, err
		}
		if err := s.addNew(tx, "note", statementNoteItem{PK: schema.SandboxStatementNotePK(eventID), SK: schema.SandboxStatementNoteSK,
			Type: schema.KindSandboxStatementNote, ExpiresAt: expiry(at)}); err != nil {
			return nil, err
		}
		if a.Status == issuer.AuthorizationPending {
			held := max(a.Held-amount, 0)
			if amount == 0 {
				held = 0
			}
			status := a.Status
			if held == 0 {
				status = ended
			}
			tx.Add("authorization", s.holdUpdate(a, held, status))
		}
		return tx, nil
	}, noteRefused)
	if errors.Is(err, errNoteTaken) || errors.Is(err, errNoAuthorization) {
		return nil
	}
	return err
}

// errNoAuthorization ends a write about an authorization not kept.
var errNoAuthorization = errors.New("store: sandbox statement authorization not kept")

// noteRefused says why a log's write was refused: the notification was
// logged already, or the authorization changed since it was read.
func noteRefused(_ context.Context, c dynamo.Cancellation) error {
	switch {
	case c.Failed("note"):
		return errNoteTaken
	case c.Failed("authorization"):
		return dynamo.ErrRetry
	}
	return nil
}

// statementAuthorization reads authorization id of the log, strongly
// consistent; found is false when it is not kept (or id is "").
func (s *Store) statementAuthorization(ctx context.Context, id string) (statementAuthorizationItem, bool, error) {
	var it statementAuthorizationItem
	if id == "" {
		return it, false, nil
	}
	found, err := s.db.Find(ctx, schema.SandboxStatementPK(id), schema.SandboxStatementAuthorizationSK, &it)
	return it, found, err
}

// holdUpdate returns the write that makes authorization a hold held, with
// status, on the condition that it still holds what it was read holding.
func (s *Store) holdUpdate(a statementAuthorizationItem, held int64, status string) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(a.PK, a.SK),
		UpdateExpression:          aws.String("SET #held = :held, #status = :status"),
		ConditionExpression:       aws.String("#held = :was AND #status = :from"),
		ExpressionAttributeNames:  map[string]string{"#held": "held", "#status": "status"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":held": dynamo.Num(held), ":status": dynamo.Str(status), ":was": dynamo.Num(a.Held), ":from": dynamo.Str(a.Status)},
	}}
}

// StatementTransactions lists up to limit logged transactions created at
// or after since, oldest first, after transaction after.
func (s *Store) StatementTransactions(ctx context.Context, since time.Time, after string, limit int) ([]issuer.StatementTransaction, string, error) {
	items, next, err := s.statementPage(ctx, schema.SandboxTransactionsGSI1PK, schema.SandboxStatementTransactionSK, since, after, limit)
	if err != nil {
		return nil, "", err
	}
	txs, err := dynamo.DecodeAll(items, statementTransactionItem.transaction)
	return txs, next, err
}

// StatementAuthorizations lists up to limit logged authorizations created
// at or after since, oldest first, after authorization after.
func (s *Store) StatementAuthorizations(ctx context.Context, since time.Time, after string, limit int) ([]issuer.StatementAuthorization, string, error) {
	items, next, err := s.statementPage(ctx, schema.SandboxAuthorizationsGSI1PK, schema.SandboxStatementAuthorizationSK, since, after, limit)
	if err != nil {
		return nil, "", err
	}
	as, err := dynamo.DecodeAll(items, statementAuthorizationItem.authorization)
	return as, next, err
}

// statementPage queries one page of the list partition, from since or
// after the entry after (whose key is read from its item, of sort key
// sk), and returns its items and the id to read the next page after.
func (s *Store) statementPage(ctx context.Context, partition, sk string, since time.Time, after string, limit int) ([]map[string]types.AttributeValue, string, error) {
	if limit < 1 {
		return nil, "", fmt.Errorf("store: a page of %d sandbox statement entries", limit)
	}
	cond, from := "#pk = :pk AND #sk >= :from", timestamp.Format(since)
	if after != "" {
		var it struct {
			GSI1SK string `dynamodbav:"GSI1SK"`
		}
		if err := s.db.Get(ctx, "sandbox statement entry "+after, schema.SandboxStatementPK(after), sk, &it, issuer.ErrNotFound); err != nil {
			return nil, "", err
		}
		cond, from = "#pk = :pk AND #sk > :from", it.GSI1SK
	}
	out, err := s.db.Client.Query(ctx, &dynamodb.QueryInput{
		TableName:                 aws.String(s.db.Table),
		IndexName:                 aws.String(schema.GSI1),
		KeyConditionExpression:    aws.String(cond),
		ExpressionAttributeNames:  map[string]string{"#pk": schema.AttrGSI1PK, "#sk": schema.AttrGSI1SK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": dynamo.Str(partition), ":from": dynamo.Str(from)},
		Limit:                     aws.Int32(int32(limit)),
	})
	if err != nil {
		return nil, "", fmt.Errorf("store: query the sandbox statements: %w", err)
	}
	next := ""
	if len(out.LastEvaluatedKey) > 0 && len(out.Items) > 0 {
		next = dynamo.StringAttr(out.Items[len(out.Items)-1], "id")
	}
	return out.Items, next, nil
}
