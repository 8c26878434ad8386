package main

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
)

// TestCardSecrets runs the command against a table of DynamoDB Local
// holding a card with its sealed values inline, in each mode: a bad
// command line, or a mode that is neither production nor sandbox, changes
// nothing; a dry run counts the card; the migration takes number and cvv
// out of the card and keeps the rest, production deleting them, sandbox
// moving them into the card's secrets item (the card keeping their
// tokens); a second run finds nothing.
func TestCardSecrets(t *testing.T) {
	for _, mode := range []struct {
		mode, done string
		move       bool
	}{{"production", "removed from", false}, {"sandbox", "moved to their own item from", true}} {
		t.Run(mode.mode, func(t *testing.T) {
			db := storetest.NewDB(t)
			ctx := context.Background()
			key := map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK("c1")}, "SK": &types.AttributeValueMemberS{Value: schema.CardSK("k1")},
			}
			secretsKey := map[string]types.AttributeValue{"PK": key["PK"], "SK": &types.AttributeValueMemberS{Value: schema.CardSecretsSK("k1")}}
			sealed := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"key_id": &types.AttributeValueMemberS{Value: "k"}}}
			item := map[string]types.AttributeValue{"PK": key["PK"], "SK": key["SK"], "type": &types.AttributeValueMemberS{Value: schema.KindCard},
				"last4": &types.AttributeValueMemberS{Value: "4242"}, "number": sealed, "cvv": sealed}
			if _, err := db.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(db.Table), Item: item}); err != nil {
				t.Fatal(err)
			}
			stored := func(key map[string]types.AttributeValue) map[string]types.AttributeValue {
				t.Helper()
				out, err := db.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(db.Table), Key: key, ConsistentRead: aws.Bool(true)})
				if err != nil {
					t.Fatal(err)
				}
				return out.Item
			}
			ep := storetest.Endpoint(t)
			args := func(extra ...string) []string {
				return append([]string{"card-secrets", "-table", db.Table, "-mode", mode.mode, "-endpoint", ep}, extra...)
			}
			tests := []struct {
				name       string
				args       []string
				wantErr    string
				wantOut    string
				wantSealed bool
			}{
				{"no migration named", []string{"-table", db.Table}, "usage", "", true},
				{"no table", []string{"card-secrets", "-mode", mode.mode}, "usage", "", true},
				{"unknown mode", []string{"card-secrets", "-table", db.Table, "-mode", "staging", "-endpoint", ep}, "must be production or sandbox", "", true},
				{"dry run", args("-dry-run"), "", "would be " + mode.done + " (dry run) 1 of 1 cards", true},
				{"migration", args("-page", "1"), "", mode.done + " 1 of 1 cards", false},
				{"again", args(), "", mode.done + " 0 of 0 cards", false},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					var out strings.Builder
					err := run(ctx, tt.args, &out)
					if (tt.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
						t.Fatalf("err = %v, want %q", err, tt.wantErr)
					}
					if !strings.Contains(out.String(), tt.wantOut) {
						t.Errorf("out %q, want %q", out.String(), tt.wantOut)
					}
					it := stored(key)
					if _, has := it["number"]; has != tt.wantSealed || it["last4"] == nil {
						t.Errorf("item after: %v, want sealed %v", it, tt.wantSealed)
					}
					if _, has := it["cvv"]; has != tt.wantSealed {
						t.Errorf("cvv after: %v, want %v", it["cvv"], tt.wantSealed)
					}
					moved := mode.move && !tt.wantSealed
					if _, has := it["number_token"]; has != moved {
						t.Errorf("number_token after: %v, want %v", it["number_token"], moved)
					}
					sec := stored(secretsKey)
					if (sec["number"] != nil && sec["cvv"] != nil) != moved {
						t.Errorf("secrets item after: %v, want one %v", sec, moved)
					}
				})
			}
		})
	}
}
