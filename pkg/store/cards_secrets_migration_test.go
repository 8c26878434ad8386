package store_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"payments/pkg/store"
	"payments/pkg/store/storetest"
)

// TestRemoveCardSecrets: the one-off migration removes the sealed number
// and CVV of every card of the table, across Scan pages, leaving the rest
// of each card and every other item (one of another type carrying a
// number attribute, as the simulated issuer's cards do) as they were; a
// dry run counts and changes nothing; a second run finds nothing (it is
// idempotent).
func TestRemoveCardSecrets(t *testing.T) {
	db := storetest.NewDB(t)
	s := store.NewCards(db)
	ctx := context.Background()
	type ref struct{ company, card string }
	var ids []ref
	for range 2 {
		w := usdWallet(t, db, 100000)
		for range 3 {
			c := issue(t, s, w, uuid.NewString(), 500)
			if c.Number.IsZero() || c.CVV.IsZero() {
				t.Fatalf("card %s issued without its sealed values", c.ID)
			}
			ids = append(ids, ref{w.CompanyID, c.ID})
		}
	}
	other := map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "SANDBOX#ISSUER#CARD#x"}, "SK": &types.AttributeValueMemberS{Value: "CARD"},
		"type": &types.AttributeValueMemberS{Value: "sandbox_card"}, "number": &types.AttributeValueMemberS{Value: "sealed"},
	}
	if _, err := db.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(db.Table), Item: other}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name               string
		dryRun             bool
		wantFound, wantRem int
	}{
		{"dry run", true, 6, 0},
		{"migration", false, 6, 6},
		{"again", false, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.RemoveCardSecrets(ctx, 4, tt.dryRun)
			if err != nil {
				t.Fatal(err)
			}
			if got.Found != tt.wantFound || got.Removed != tt.wantRem || got.Pages < 2 {
				t.Errorf("%+v, want %d found, %d removed, over several pages", got, tt.wantFound, tt.wantRem)
			}
		})
	}
	for _, id := range ids {
		c, err := s.Card(ctx, id.company, id.card)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Number.IsZero() || !c.CVV.IsZero() || c.Balance != 500 || c.Last4 != "4242" || c.IssuerCardID == "" {
			t.Errorf("card %s after the migration: %+v", id.card, c)
		}
	}
	out, err := db.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(db.Table), ConsistentRead: aws.Bool(true),
		Key: map[string]types.AttributeValue{"PK": other["PK"], "SK": other["SK"]}})
	if err != nil || out.Item["number"] == nil {
		t.Errorf("the item of another type lost its number: %v %v", err, out.Item)
	}
}
