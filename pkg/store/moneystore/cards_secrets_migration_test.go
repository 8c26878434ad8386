package moneystore_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"payments/pkg/cards"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
	"payments/pkg/wallets"
)

// cardRef names a card of a company.
type cardRef struct{ company, card string }

// str is a string attribute.
func str(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

// legacyCard issues a card holding 500 and rewrites it as a sandbox card
// issued before the secrets item was stored: its sealed number and CVV
// inline in the card item, no refs, no secrets item.
func legacyCard(t *testing.T, db *store.DB, s *moneystore.Cards, w wallets.Wallet) cardRef {
	t.Helper()
	ctx := context.Background()
	c := issue(t, s, w, uuid.NewString(), 500)
	number, err := attributevalue.Marshal(testNumber)
	if err != nil {
		t.Fatal(err)
	}
	cvv, err := attributevalue.Marshal(testCVV)
	if err != nil {
		t.Fatal(err)
	}
	pk := str(schema.CompanyPK(w.CompanyID))
	if _, err := db.Client.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName: aws.String(db.Table), Key: map[string]types.AttributeValue{"PK": pk, "SK": str(schema.CardSK(c.ID))},
		UpdateExpression:          aws.String("SET #n = :n, #c = :c REMOVE sealed_key_id, number_token, cvv_token"),
		ExpressionAttributeNames:  map[string]string{"#n": "number", "#c": "cvv"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":n": number, ":c": cvv},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Client.DeleteItem(ctx, &dynamodb.DeleteItemInput{
		TableName: aws.String(db.Table), Key: map[string]types.AttributeValue{"PK": pk, "SK": str(schema.CardSecretsSK(c.ID))},
	}); err != nil {
		t.Fatal(err)
	}
	return cardRef{w.CompanyID, c.ID}
}

// rawItem reads an item of the table as stored.
func rawItem(t *testing.T, db *store.DB, pk, sk string) map[string]types.AttributeValue {
	t.Helper()
	out, err := db.Client.GetItem(context.Background(), &dynamodb.GetItemInput{TableName: aws.String(db.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": str(pk), "SK": str(sk)}})
	if err != nil {
		t.Fatal(err)
	}
	return out.Item
}

// TestCardSecretsMigration: a card item holding its sealed values inline
// (a sandbox card issued before the secrets item) still reads with its
// tokens and still reveals them; the one-off migration, across Scan pages,
// removes them (production mode: RemoveCardSecrets) or moves them into the
// secrets item leaving the tokens (sandbox mode: MoveCardSecrets), keeping
// the rest of each card, every card already migrated and every other item
// (one of another type carrying a number attribute, as the simulated
// issuer's cards do) as they were; a dry run counts and changes nothing; a
// second run finds nothing (it is idempotent).
func TestCardSecretsMigration(t *testing.T) {
	want := cards.Secrets{Number: testNumber, CVV: testCVV}
	for _, mode := range []struct {
		name string
		move bool
	}{{"production removes", false}, {"sandbox moves", true}} {
		t.Run(mode.name, func(t *testing.T) {
			db := storetest.NewDB(t)
			s := moneystore.NewCards(db)
			ctx := context.Background()
			var legacy []cardRef
			for range 2 {
				w := usdWallet(t, db, 100000)
				for range 3 {
					legacy = append(legacy, legacyCard(t, db, s, w))
				}
			}
			w := usdWallet(t, db, 100000)
			current := issue(t, s, w, uuid.NewString(), 500)
			other := map[string]types.AttributeValue{
				"PK": str(schema.SandboxCardPK("x")), "SK": str(schema.SandboxCardSK), "type": str(schema.KindSandboxCard), "number": str("sealed"),
			}
			if _, err := db.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(db.Table), Item: other}); err != nil {
				t.Fatal(err)
			}
			for _, id := range legacy {
				c, err := s.Card(ctx, id.company, id.card)
				if err != nil || c.Sealed != cards.RefsOf(testNumber, testCVV) {
					t.Fatalf("inline card %s reads %+v, %v; want its tokens", id.card, c.Sealed, err)
				}
				if sec, err := s.CardSecrets(ctx, id.company, id.card); err != nil || !reflect.DeepEqual(sec, want) {
					t.Fatalf("CardSecrets of inline card %s = %+v, %v", id.card, sec, err)
				}
			}

			migrate := s.RemoveCardSecrets
			if mode.move {
				migrate = s.MoveCardSecrets
			}
			for _, step := range []struct {
				name               string
				dryRun             bool
				wantFound, wantRem int
			}{
				{"dry run", true, 6, 0},
				{"migration", false, 6, 6},
				{"again", false, 0, 0},
			} {
				got, err := migrate(ctx, 4, step.dryRun)
				if err != nil {
					t.Fatalf("%s: %v", step.name, err)
				}
				if got.Found != step.wantFound || got.Removed != step.wantRem || got.Pages < 2 {
					t.Errorf("%s: %+v, want %d found, %d removed, over several pages", step.name, got, step.wantFound, step.wantRem)
				}
			}

			for _, id := range legacy {
				c, err := s.Card(ctx, id.company, id.card)
				if err != nil || c.Balance != 500 || c.Last4 != "4242" || c.IssuerCardID == "" {
					t.Fatalf("card %s after the migration: %+v, %v", id.card, c, err)
				}
				it := rawItem(t, db, schema.CompanyPK(id.company), schema.CardSK(id.card))
				if it["number"] != nil || it["cvv"] != nil {
					t.Errorf("card item %s still holds sealed values: %v", id.card, it)
				}
				sec, err := s.CardSecrets(ctx, id.company, id.card)
				if mode.move {
					if c.Sealed != cards.RefsOf(testNumber, testCVV) || err != nil || !reflect.DeepEqual(sec, want) {
						t.Errorf("moved card %s: refs %+v, secrets %+v, %v", id.card, c.Sealed, sec, err)
					}
				} else if !c.Sealed.IsZero() || err == nil {
					t.Errorf("card %s after the removal: refs %+v, secrets %+v, %v", id.card, c.Sealed, sec, err)
				}
			}
			if c, err := s.Card(ctx, w.CompanyID, current.ID); err != nil || c != current {
				t.Errorf("a card stored with its secrets item changed: %+v, %v; was %+v", c, err, current)
			}
			if sec, err := s.CardSecrets(ctx, w.CompanyID, current.ID); err != nil || !reflect.DeepEqual(sec, want) {
				t.Errorf("secrets of a card stored with its secrets item: %+v, %v", sec, err)
			}
			if it := rawItem(t, db, schema.SandboxCardPK("x"), schema.SandboxCardSK); it["number"] == nil {
				t.Errorf("the item of another type lost its number: %v", it)
			}
		})
	}
}
