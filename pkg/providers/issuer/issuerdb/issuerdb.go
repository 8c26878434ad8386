// Package issuerdb is the sandbox card issuer's own store (issuersandbox.Store)
// in DynamoDB: the simulated issuer keeps its cardholders, cards and
// movements in partitions of its own, as a remote issuer would.
package issuerdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/vault"
)

// Store keeps the sandbox card issuer's state, in partitions of
// their own that none of our records share: the simulated issuer's state
// stays apart from ours, as a remote issuer's would.
//
//   - SANDBOX#ISSUER#CARDHOLDER#<issuer id>: a cardholder;
//   - SANDBOX#ISSUER#CHREF#<our customer id>: the id of the cardholder
//     enrolled with that reference;
//   - SANDBOX#ISSUER#CARD#<issuer id>: a card, with its balance and status;
//   - SANDBOX#ISSUER#CARDREF#<our card id>: the id of the card issued with
//     that reference, or its decline;
//   - SANDBOX#ISSUER#MOVE#<reference>: the claim of a movement's
//     reference (our transaction id, or a posting's).
type Store struct{ db *dynamo.DB }

var _ issuersandbox.Store = (*Store)(nil)

// New returns the sandbox issuer's store on db.
func New(db *dynamo.DB) *Store { return &Store{db: db} }

// errSandboxRefTaken is a reference recorded by an earlier request.
var errSandboxRefTaken = errors.New("store: sandbox issuer reference taken")

type sandboxCardholderItem struct {
	PK                   string `dynamodbav:"PK"`
	SK                   string `dynamodbav:"SK"`
	Type                 string `dynamodbav:"type"`
	ID                   string `dynamodbav:"id"`
	Reference            string `dynamodbav:"reference"`
	FirstName            string `dynamodbav:"first_name"`
	LastName             string `dynamodbav:"last_name"`
	Email                string `dynamodbav:"email"`
	IdentificationNumber string `dynamodbav:"identification_number"`
	CreatedAt            string `dynamodbav:"created_at"`
}

func (it sandboxCardholderItem) cardholder() (issuersandbox.Cardholder, error) {
	at, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return issuersandbox.Cardholder{}, fmt.Errorf("store: sandbox cardholder %s: %w", it.ID, err)
	}
	return issuersandbox.Cardholder{
		ID: it.ID, Reference: it.Reference, FirstName: it.FirstName, LastName: it.LastName,
		Email: it.Email, IdentificationNumber: it.IdentificationNumber, CreatedAt: at,
	}, nil
}

// sandboxRefItem maps one of our references to the issuer's id of what was
// made with it; a declined card request has no id.
type sandboxRefItem struct {
	PK           string `dynamodbav:"PK"`
	SK           string `dynamodbav:"SK"`
	Type         string `dynamodbav:"type"`
	ID           string `dynamodbav:"id,omitempty"`
	CardholderID string `dynamodbav:"cardholder_id,omitempty"`
	Declined     bool   `dynamodbav:"declined,omitempty"`
	CreatedAt    string `dynamodbav:"created_at"`
}

type sandboxCardItem struct {
	PK           string       `dynamodbav:"PK"`
	SK           string       `dynamodbav:"SK"`
	Type         string       `dynamodbav:"type"`
	ID           string       `dynamodbav:"id"`
	Reference    string       `dynamodbav:"reference"`
	CardholderID string       `dynamodbav:"cardholder_id"`
	Brand        string       `dynamodbav:"brand"`
	Last4        string       `dynamodbav:"last4"`
	ExpiryMonth  int          `dynamodbav:"expiry_month"`
	ExpiryYear   int          `dynamodbav:"expiry_year"`
	Balance      int64        `dynamodbav:"balance"`
	Holds        int64        `dynamodbav:"holds"`
	HeldBalance  int64        `dynamodbav:"held_balance"`
	Status       string       `dynamodbav:"status"`
	Number       vault.Sealed `dynamodbav:"number"`
	CVV          vault.Sealed `dynamodbav:"cvv"`
	CreatedAt    string       `dynamodbav:"created_at"`
}

func (it sandboxCardItem) card() (issuersandbox.Card, error) {
	at, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return issuersandbox.Card{}, fmt.Errorf("store: sandbox card %s: %w", it.ID, err)
	}
	return issuersandbox.Card{Card: issuer.Card{
		ID: it.ID, Reference: it.Reference, CardholderID: it.CardholderID, Brand: issuer.Brand(it.Brand),
		Last4: it.Last4, ExpiryMonth: it.ExpiryMonth, ExpiryYear: it.ExpiryYear, Balance: it.Balance,
		Available: it.Balance - it.Holds, Status: issuer.CardStatus(it.Status), CreatedAt: at,
	}, HeldBalance: it.HeldBalance, Number: it.Number, CVV: it.CVV}, nil
}

type sandboxMoveItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	Reference string `dynamodbav:"reference"`
	CardID    string `dynamodbav:"card_id"`
	Delta     int64  `dynamodbav:"delta"`
	Held      int64  `dynamodbav:"held,omitempty"`
	CreatedAt string `dynamodbav:"created_at"`
}

// PutCardholder writes the cardholder and its reference lookup in one
// transaction, each conditioned on being new; a taken reference returns the
// cardholder recorded for it.
func (s *Store) PutCardholder(ctx context.Context, c issuersandbox.Cardholder) (issuersandbox.Cardholder, error) {
	at := timestamp.Format(c.CreatedAt)
	t := &dynamo.Txn{}
	err := errors.Join(
		s.addNew(t, "cardholder", sandboxCardholderItem{
			PK: schema.SandboxCardholderPK(c.ID), SK: schema.SandboxCardholderSK, Type: schema.KindSandboxCardholder,
			ID: c.ID, Reference: c.Reference, FirstName: c.FirstName, LastName: c.LastName,
			Email: c.Email, IdentificationNumber: c.IdentificationNumber, CreatedAt: at,
		}),
		s.addNew(t, "reference", sandboxRefItem{
			PK: schema.SandboxCardholderRefPK(c.Reference), SK: schema.SandboxRefSK, Type: schema.KindSandboxCardholderRef,
			ID: c.ID, CreatedAt: at,
		}),
	)
	if err != nil {
		return issuersandbox.Cardholder{}, err
	}
	err = s.db.WriteOnce(ctx, "enrol sandbox cardholder "+c.Reference, t, refTaken)
	switch {
	case errors.Is(err, errSandboxRefTaken):
		var ref sandboxRefItem
		if err := s.getExisting(ctx, schema.SandboxCardholderRefPK(c.Reference), schema.SandboxRefSK, &ref); err != nil {
			return issuersandbox.Cardholder{}, err
		}
		return s.Cardholder(ctx, ref.ID)
	case err != nil:
		return issuersandbox.Cardholder{}, err
	}
	return c, nil
}

// Cardholder reads a cardholder by the issuer's id, strongly consistent.
func (s *Store) Cardholder(ctx context.Context, id string) (issuersandbox.Cardholder, error) {
	var it sandboxCardholderItem
	if err := s.db.Get(ctx, "sandbox cardholder "+id, schema.SandboxCardholderPK(id), schema.SandboxCardholderSK, &it, fmt.Errorf("store: sandbox cardholder %s: %w", id, issuer.ErrNotFound)); err != nil {
		return issuersandbox.Cardholder{}, err
	}
	return it.cardholder()
}

// PutCard writes the card and its reference lookup in one transaction, each
// conditioned on being new, or the reference lookup alone for a declined
// request; a taken reference returns what was recorded for it.
func (s *Store) PutCard(ctx context.Context, c issuersandbox.Card) (issuersandbox.Card, error) {
	at := timestamp.Format(c.CreatedAt)
	t := &dynamo.Txn{}
	err := s.addNew(t, "reference", sandboxRefItem{
		PK: schema.SandboxCardRefPK(c.Reference), SK: schema.SandboxRefSK, Type: schema.KindSandboxCardRef,
		ID: c.ID, CardholderID: c.CardholderID, Declined: c.Declined, CreatedAt: at,
	})
	if err == nil && !c.Declined {
		err = s.addNew(t, "card", sandboxCardItem{
			PK: schema.SandboxCardPK(c.ID), SK: schema.SandboxCardSK, Type: schema.KindSandboxCard,
			ID: c.ID, Reference: c.Reference, CardholderID: c.CardholderID, Brand: string(c.Brand),
			Last4: c.Last4, ExpiryMonth: c.ExpiryMonth, ExpiryYear: c.ExpiryYear,
			Balance: c.Balance, Status: string(c.Status), CreatedAt: at,
			Number: c.Number, CVV: c.CVV,
		})
	}
	if err != nil {
		return issuersandbox.Card{}, err
	}
	err = s.db.WriteOnce(ctx, "issue sandbox card "+c.Reference, t, refTaken)
	switch {
	case errors.Is(err, errSandboxRefTaken):
		var ref sandboxRefItem
		if err := s.getExisting(ctx, schema.SandboxCardRefPK(c.Reference), schema.SandboxRefSK, &ref); err != nil {
			return issuersandbox.Card{}, err
		}
		if ref.Declined {
			at, err := timestamp.Parse(ref.CreatedAt)
			if err != nil {
				return issuersandbox.Card{}, fmt.Errorf("store: sandbox card request %s: %w", c.Reference, err)
			}
			return issuersandbox.Card{Card: issuer.Card{Reference: c.Reference, CardholderID: ref.CardholderID, CreatedAt: at}, Declined: true}, nil
		}
		return s.Card(ctx, ref.ID)
	case err != nil:
		return issuersandbox.Card{}, err
	}
	return c, nil
}

// Card reads a card by the issuer's id, strongly consistent.
func (s *Store) Card(ctx context.Context, id string) (issuersandbox.Card, error) {
	var it sandboxCardItem
	if err := s.db.Get(ctx, "sandbox card "+id, schema.SandboxCardPK(id), schema.SandboxCardSK, &it, fmt.Errorf("store: sandbox card %s: %w", id, issuer.ErrNotFound)); err != nil {
		return issuersandbox.Card{}, err
	}
	return it.card()
}

// MoveCard updates the card's balance, on the condition that the card is
// ACTIVE (a withdrawal: ACTIVE or FROZEN, and covers it), and claims the
// movement's reference, in one transaction. When the card's condition
// fails, a read of the card tells which.
func (s *Store) MoveCard(ctx context.Context, m issuersandbox.Movement) (issuersandbox.Card, error) {
	cond := "attribute_exists(PK) AND #status = :active"
	values := map[string]types.AttributeValue{
		":delta":  &types.AttributeValueMemberN{Value: strconv.FormatInt(m.Delta, 10)},
		":active": &types.AttributeValueMemberS{Value: string(issuer.CardActive)},
	}
	if m.Delta < 0 {
		cond = "attribute_exists(PK) AND #status IN (:active, :frozen) AND balance >= :need"
		values[":frozen"] = &types.AttributeValueMemberS{Value: string(issuer.CardFrozen)}
		values[":need"] = &types.AttributeValueMemberN{Value: strconv.FormatInt(-m.Delta, 10)}
	}
	return s.moveOnce(ctx, "move", m, &types.Update{
		UpdateExpression:          aws.String("SET balance = balance + :delta"),
		ConditionExpression:       aws.String(cond),
		ExpressionAttributeValues: values,
	}, s.moveRefused)
}

// PostCard updates the card's balance and holds, on the condition only
// that the card exists and is not TERMINATED, and claims the posting's
// reference, in one transaction.
func (s *Store) PostCard(ctx context.Context, m issuersandbox.Movement) (issuersandbox.Card, error) {
	return s.moveOnce(ctx, "post", m, &types.Update{
		UpdateExpression:    aws.String("SET balance = balance + :delta, holds = if_not_exists(holds, :zero) + :held"),
		ConditionExpression: aws.String("attribute_exists(PK) AND #status <> :terminated"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":delta":      &types.AttributeValueMemberN{Value: strconv.FormatInt(m.Delta, 10)},
			":held":       &types.AttributeValueMemberN{Value: strconv.FormatInt(m.Held, 10)},
			":zero":       &types.AttributeValueMemberN{Value: "0"},
			":terminated": &types.AttributeValueMemberS{Value: string(issuer.CardTerminated)},
		},
	}, func(ctx context.Context, m issuersandbox.Movement) error {
		c, err := s.Card(ctx, m.CardID)
		if err != nil {
			return err
		}
		return fmt.Errorf("store: sandbox card %s is %s: %w", m.CardID, c.Status, issuer.ErrCardState)
	})
}

// moveOnce runs update (its condition and values; the key and the status
// name are added) on the card of m and claims m's reference, in one
// transaction, and returns the card afterwards. A reference claimed
// already changes nothing: the card of its movement is returned as it is
// now. When the card's condition fails, refused says why.
func (s *Store) moveOnce(ctx context.Context, what string, m issuersandbox.Movement, update *types.Update, refused func(context.Context, issuersandbox.Movement) error) (issuersandbox.Card, error) {
	update.TableName = aws.String(s.db.Table)
	update.Key = dynamo.Key(schema.SandboxCardPK(m.CardID), schema.SandboxCardSK)
	update.ExpressionAttributeNames = map[string]string{"#status": "status"}
	t := &dynamo.Txn{}
	t.Add("card", types.TransactWriteItem{Update: update})
	err := s.addNew(t, "claim", sandboxMoveItem{
		PK: schema.SandboxMovePK(m.Reference), SK: schema.SandboxMoveSK, Type: schema.KindSandboxCardMove,
		Reference: m.Reference, CardID: m.CardID, Delta: m.Delta, Held: m.Held, CreatedAt: timestamp.Format(m.CreatedAt),
	})
	if err != nil {
		return issuersandbox.Card{}, err
	}
	err = s.db.WriteOnce(ctx, what+" sandbox card "+m.CardID+" "+m.Reference, t, func(ctx context.Context, c dynamo.Cancellation) error {
		switch {
		case c.Failed("claim"):
			return errSandboxRefTaken
		case c.Failed("card"):
			return refused(ctx, m)
		}
		return nil
	})
	switch {
	case errors.Is(err, errSandboxRefTaken):
		var claim sandboxMoveItem
		if err := s.getExisting(ctx, schema.SandboxMovePK(m.Reference), schema.SandboxMoveSK, &claim); err != nil {
			return issuersandbox.Card{}, err
		}
		return s.Card(ctx, claim.CardID)
	case err != nil:
		return issuersandbox.Card{}, err
	}
	return s.Card(ctx, m.CardID)
}

// moveRefused reads the card of a movement its condition refused and
// returns why; dynamo.ErrRetry when the card, changed since, would now allow it.
func (s *Store) moveRefused(ctx context.Context, m issuersandbox.Movement) error {
	c, err := s.Card(ctx, m.CardID)
	switch {
	case err != nil:
		return err
	case c.Status != issuer.CardActive && !(m.Delta < 0 && c.Status == issuer.CardFrozen):
		return fmt.Errorf("store: sandbox card %s is %s: %w", m.CardID, c.Status, issuer.ErrCardState)
	case c.Balance+m.Delta < 0:
		return fmt.Errorf("store: sandbox card %s holds %d, not %d: %w", m.CardID, c.Balance, -m.Delta, issuer.ErrInsufficientFunds)
	}
	return dynamo.ErrRetry
}

// SetCardStatus changes the card's status from from to to with a
// conditional update; when the condition fails, a read of the card tells
// whether it is missing.
func (s *Store) SetCardStatus(ctx context.Context, id string, from, to issuer.CardStatus) (issuersandbox.Card, error) {
	return s.updateCard(ctx, "set sandbox card "+id+" "+string(to), id, &dynamodb.UpdateItemInput{
		UpdateExpression:    aws.String("SET #status = :to"),
		ConditionExpression: aws.String("#status = :from"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":from": &types.AttributeValueMemberS{Value: string(from)},
			":to":   &types.AttributeValueMemberS{Value: string(to)},
		},
	}, func(c issuersandbox.Card) (issuersandbox.Card, error) {
		return issuersandbox.Card{}, fmt.Errorf("store: sandbox card %s is %s, not %s: %w", id, c.Status, from, issuer.ErrCardState)
	})
}

// TerminateCard moves the balance of an ACTIVE or FROZEN card to its held
// balance, releases its holds and makes it TERMINATED, with a conditional
// update; a card already TERMINATED is read and returned.
func (s *Store) TerminateCard(ctx context.Context, id string) (issuersandbox.Card, error) {
	return s.updateCard(ctx, "terminate sandbox card "+id, id, &dynamodb.UpdateItemInput{
		UpdateExpression:    aws.String("SET #status = :terminated, held_balance = balance, balance = :zero, holds = :zero"),
		ConditionExpression: aws.String("#status IN (:active, :frozen)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":terminated": &types.AttributeValueMemberS{Value: string(issuer.CardTerminated)},
			":active":     &types.AttributeValueMemberS{Value: string(issuer.CardActive)},
			":frozen":     &types.AttributeValueMemberS{Value: string(issuer.CardFrozen)},
			":zero":       &types.AttributeValueMemberN{Value: "0"},
		},
	}, func(c issuersandbox.Card) (issuersandbox.Card, error) {
		if c.Status != issuer.CardTerminated {
			return issuersandbox.Card{}, fmt.Errorf("store: sandbox card %s is %s: %w", id, c.Status, issuer.ErrCardState)
		}
		return c, nil
	})
}

// updateCard runs in (whose condition is checked only on an existing card)
// on the card id and returns the card after it. When the condition fails,
// the card is read: missing is ErrNotFound, otherwise refused answers.
func (s *Store) updateCard(ctx context.Context, what, id string, in *dynamodb.UpdateItemInput, refused func(issuersandbox.Card) (issuersandbox.Card, error)) (issuersandbox.Card, error) {
	in.TableName = aws.String(s.db.Table)
	in.Key = dynamo.Key(schema.SandboxCardPK(id), schema.SandboxCardSK)
	in.ConditionExpression = aws.String("attribute_exists(PK) AND " + aws.ToString(in.ConditionExpression))
	in.ExpressionAttributeNames = map[string]string{"#status": "status"}
	in.ReturnValues = types.ReturnValueAllNew
	out, err := s.db.Update(ctx, what, in)
	if dynamo.ConditionFailed(err) {
		c, err := s.Card(ctx, id)
		if err != nil {
			return issuersandbox.Card{}, err
		}
		return refused(c)
	}
	if err != nil {
		return issuersandbox.Card{}, err
	}
	var it sandboxCardItem
	if err := attributevalue.UnmarshalMap(out.Attributes, &it); err != nil {
		return issuersandbox.Card{}, fmt.Errorf("store: %s: decode: %w", what, err)
	}
	return it.card()
}

// addNew adds item v to t under name, conditioned on no item having its
// key.
func (s *Store) addNew(t *dynamo.Txn, name string, v any) error {
	item, err := attributevalue.MarshalMap(v)
	if err != nil {
		return fmt.Errorf("store: marshal sandbox issuer %s: %w", name, err)
	}
	t.Add(name, types.TransactWriteItem{Put: &types.Put{
		TableName:           aws.String(s.db.Table),
		Item:                item,
		ConditionExpression: aws.String("attribute_not_exists(PK)"),
	}})
	return nil
}

// refTaken answers a cancelled put whose reference lookup exists.
func refTaken(_ context.Context, c dynamo.Cancellation) error {
	if c.Failed("reference") {
		return errSandboxRefTaken
	}
	return nil
}

// getExisting reads the item (pk, sk), strongly consistent, into out: an
// item a write refused for it showed to exist, so its absence is an error.
func (s *Store) getExisting(ctx context.Context, pk, sk string, out any) error {
	return s.db.Get(ctx, "sandbox issuer item "+pk, pk, sk, out, fmt.Errorf("store: sandbox issuer item %s: no such item", pk))
}
