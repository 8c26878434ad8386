package cards_test

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/app/apptest"
	"payments/pkg/store"
	"payments/pkg/store/schema"
)

// scanAll reads every item of the table, or of its index when index is
// set.
func scanAll(t *testing.T, db *store.DB, index string) []map[string]types.AttributeValue {
	t.Helper()
	in := &dynamodb.ScanInput{TableName: aws.String(db.Table)}
	if index != "" {
		in.IndexName = aws.String(index)
	}
	var items []map[string]types.AttributeValue
	for p := dynamodb.NewScanPaginator(db.Client, in); p.HasMorePages(); {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatalf("scan %q: %v", index, err)
		}
		items = append(items, page.Items...)
	}
	return items
}

// sealedIn names the attributes of item that are, or hold, a sealed value:
// number, cvv, or a map with a ciphertext at any depth.
func sealedIn(item map[string]types.AttributeValue) []string {
	var found []string
	var walk func(path string, v types.AttributeValue)
	walk = func(path string, v types.AttributeValue) {
		switch v := v.(type) {
		case *types.AttributeValueMemberM:
			for k, sub := range v.Value {
				if k == "ciphertext" {
					found = append(found, path)
				}
				walk(path+"."+k, sub)
			}
		case *types.AttributeValueMemberL:
			for _, sub := range v.Value {
				walk(path+"[]", sub)
			}
		}
	}
	for name, v := range item {
		if name == "number" || name == "cvv" {
			found = append(found, name)
		}
		walk(name, v)
	}
	return found
}

// TestNoSealedValueInAnyIndex: sandbox cards issued through the service
// keep their sealed number and CVV in the table only, in an item no index
// copies: a Scan of each index (GSI1, GSI2, GSI3: each projects ALL) finds
// the cards but no number, cvv or ciphertext, while the table holds one
// secrets item per card (and the simulated issuer's own cards), none with
// an index key; reveal still opens the right number.
func TestNoSealedValueInAnyIndex(t *testing.T) {
	t.Parallel()
	e := apptest.NewCardsTestEnv(t)
	_, token, _, customerID := e.CardCompany("100", "CM-7101")
	cardIDs := map[string]string{} // card id → its masked PAN
	for range 2 {
		r := e.Call(e.Cards, token, "POST", "/cards", `{"customer_id":"`+customerID+`","brand":"visa","amount":10}`)
		if r.Status != 201 || r.Str("data", "status") != "ACTIVE" || !strings.HasPrefix(r.Str("data", "number"), "tok_") {
			t.Fatalf("issue: %d %s", r.Status, r.Raw)
		}
		cardIDs[r.Str("data", "id")] = r.Str("data", "masked_pan")
	}

	for _, index := range []string{store.GSI1, store.GSI2, store.GSI3} {
		cardsSeen := 0
		for _, it := range scanAll(t, e.DB, index) {
			if s, ok := it["type"].(*types.AttributeValueMemberS); ok && s.Value == "card" {
				cardsSeen++
			}
			if found := sealedIn(it); len(found) != 0 {
				t.Errorf("index %s: item %v %v holds sealed values %v", index, it["PK"], it["SK"], found)
			}
		}
		if index != store.GSI2 && cardsSeen != len(cardIDs) { // GSI1 and GSI3 index every card
			t.Errorf("index %s holds %d cards, want %d", index, cardsSeen, len(cardIDs))
		}
	}
	secrets := 0
	for _, it := range scanAll(t, e.DB, "") {
		if len(sealedIn(it)) == 0 {
			continue
		}
		// Our secrets items and the simulated issuer's own cards: neither
		// carries an index key.
		if it["GSI1PK"] != nil || it["GSI2PK"] != nil || it["GSI3PK"] != nil {
			t.Errorf("item %v %v holds sealed values and an index key", it["PK"], it["SK"])
		}
		if sk, _ := it["SK"].(*types.AttributeValueMemberS); sk != nil && strings.HasPrefix(sk.Value, schema.CardSecretsSKPrefix) {
			secrets++
		}
	}
	if secrets != len(cardIDs) {
		t.Errorf("%d secrets items, want %d", secrets, len(cardIDs))
	}

	for id, masked := range cardIDs {
		r := e.Call(e.Cards, token, "GET", "/cards/"+id+"?reveal=true&sync=false", "")
		if number := r.Str("data", "number"); r.Status != 200 || len(number) != 16 || number[12:] != masked[15:] || len(r.Str("data", "cvv")) != 3 {
			t.Errorf("reveal of %s: %d %s", id, r.Status, r.Raw)
		}
	}
}
