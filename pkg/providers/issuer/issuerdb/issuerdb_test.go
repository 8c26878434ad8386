package issuerdb_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"payments/pkg/providers/issuer"
	"payments/pkg/providers/issuer/issuerdb"
	"payments/pkg/providers/issuer/issuersandbox"
	"payments/pkg/store"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
	"payments/pkg/vault"
)

var sandboxIssuerNow = time.Date(2026, 11, 23, 10, 0, 0, 123_000_000, time.UTC)

func sandboxCardholder(ref string) issuersandbox.Cardholder {
	return issuersandbox.Cardholder{
		ID: "ch_" + uuid.NewString(), Reference: ref, FirstName: "Ada", LastName: "Lovelace",
		Email: "ada@example.com", IdentificationNumber: "CM-123456", CreatedAt: sandboxIssuerNow,
	}
}

// sandboxCard returns a new card of balance, whose sealed secrets are
// random bytes of the sizes a vault makes.
func sandboxCard(holderID string, balance int64) issuersandbox.Card {
	return issuersandbox.Card{Card: issuer.Card{
		ID: "card_" + uuid.NewString(), Reference: uuid.NewString(), CardholderID: holderID,
		Brand: issuer.Visa, Last4: "4242", ExpiryMonth: 11, ExpiryYear: 2029,
		Balance: balance, Available: balance, Status: issuer.CardActive, CreatedAt: sandboxIssuerNow,
	}, Number: randomSealed(16), CVV: randomSealed(3)}
}

// randomSealed returns a vault.Sealed of random bytes, as the sealing of a
// secret of n bytes would be.
func randomSealed(n int) vault.Sealed {
	part := func(n int) []byte {
		b := make([]byte, n)
		rand.Read(b)
		return b
	}
	return vault.Sealed{KeyID: "local:0badc0de", DataKey: part(60), Nonce: part(12), Ciphertext: part(n + 16)}
}

// sameCard reports whether a and b are the same sandbox card, sealed
// secrets included (a struct holding a vault.Sealed has no ==).
func sameCard(a, b issuersandbox.Card) bool {
	return a.Card == b.Card && a.Declined == b.Declined && a.HeldBalance == b.HeldBalance &&
		sameSealed(a.Number, b.Number) && sameSealed(a.CVV, b.CVV)
}

// sameSealed reports whether a and b hold the same key id and bytes; an
// empty part equals a missing one.
func sameSealed(a, b vault.Sealed) bool {
	return a.KeyID == b.KeyID && bytes.Equal(a.DataKey, b.DataKey) &&
		bytes.Equal(a.Nonce, b.Nonce) && bytes.Equal(a.Ciphertext, b.Ciphertext)
}

// TestSandboxIssuerStore: the sandbox issuer's cardholders and cards are
// recorded once per reference, under keys of its own.
func TestSandboxIssuerStore(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := issuerdb.New(db.DB)

	t.Run("a cardholder once per reference", func(t *testing.T) {
		first := sandboxCardholder(uuid.NewString())
		got, err := s.PutCardholder(ctx, first)
		if err != nil || got != first {
			t.Fatalf("PutCardholder = %+v, %v; want %+v", got, err, first)
		}
		again := sandboxCardholder(first.Reference)
		again.IdentificationNumber = "other"
		if got, err := s.PutCardholder(ctx, again); err != nil || got != first {
			t.Fatalf("PutCardholder again = %+v, %v; want %+v", got, err, first)
		}
		if _, err := s.Cardholder(ctx, again.ID); !errors.Is(err, issuer.ErrNotFound) {
			t.Fatalf("Cardholder of the refused id = %v, want ErrNotFound", err)
		}
	})

	t.Run("concurrent enrolments of one reference make one cardholder", func(t *testing.T) {
		ref := uuid.NewString()
		got := make([]issuersandbox.Cardholder, 10)
		errs := make([]error, len(got))
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i], errs[i] = s.PutCardholder(ctx, sandboxCardholder(ref)) })
		}
		wg.Wait()
		for i := range got {
			if errs[i] != nil || got[i].ID != got[0].ID {
				t.Fatalf("PutCardholder %d = %+v, %v; want id %s", i, got[i], errs[i], got[0].ID)
			}
		}
		if n := countItems(t, db, schema.KindSandboxCardholder, ref); n != 1 {
			t.Fatalf("%d cardholder items with reference %s, want 1", n, ref)
		}
	})

	t.Run("a card or its decline once per reference", func(t *testing.T) {
		card := sandboxCard("ch_x", 500)
		if got, err := s.PutCard(ctx, card); err != nil || !sameCard(got, card) {
			t.Fatalf("PutCard = %+v, %v; want %+v", got, err, card)
		}
		again := sandboxCard("ch_x", 900)
		again.Reference = card.Reference
		if got, err := s.PutCard(ctx, again); err != nil || !sameCard(got, card) {
			t.Fatalf("PutCard again = %+v, %v; want %+v", got, err, card)
		}
		declined := issuersandbox.Card{Card: issuer.Card{Reference: uuid.NewString(), CardholderID: "ch_y", CreatedAt: sandboxIssuerNow}, Declined: true}
		for range 2 {
			if got, err := s.PutCard(ctx, declined); err != nil || !sameCard(got, declined) {
				t.Fatalf("PutCard declined = %+v, %v; want %+v", got, err, declined)
			}
		}
		issued := sandboxCard("ch_y", 1)
		issued.Reference = declined.Reference
		if got, err := s.PutCard(ctx, issued); err != nil || !sameCard(got, declined) {
			t.Fatalf("PutCard on a declined reference = %+v, %v; want the decline", got, err)
		}
	})

	t.Run("the sealed secrets come back from every read", func(t *testing.T) {
		card := sandboxCard("ch_x", 100)
		if _, err := s.PutCard(ctx, card); err != nil {
			t.Fatal(err)
		}
		reads := []struct {
			name string
			do   func() (issuersandbox.Card, error)
		}{
			{"Card", func() (issuersandbox.Card, error) { return s.Card(ctx, card.ID) }},
			{"PutCard again", func() (issuersandbox.Card, error) {
				again := sandboxCard("ch_x", 100)
				again.Reference = card.Reference
				return s.PutCard(ctx, again)
			}},
			{"MoveCard", func() (issuersandbox.Card, error) {
				return s.MoveCard(ctx, issuersandbox.Movement{Reference: uuid.NewString(), CardID: card.ID, Delta: 1, CreatedAt: sandboxIssuerNow})
			}},
			{"SetCardStatus", func() (issuersandbox.Card, error) {
				return s.SetCardStatus(ctx, card.ID, issuer.CardActive, issuer.CardFrozen)
			}},
			{"TerminateCard", func() (issuersandbox.Card, error) { return s.TerminateCard(ctx, card.ID) }},
		}
		for _, r := range reads {
			got, err := r.do()
			if err != nil || got.ID != card.ID || !sameSealed(got.Number, card.Number) || !sameSealed(got.CVV, card.CVV) {
				t.Fatalf("%s = card %s, %v; want %s with its sealed secrets", r.name, got.ID, err, card.ID)
			}
		}
	})

	t.Run("movements", func(t *testing.T) {
		card := sandboxCard("ch_x", 1000)
		if _, err := s.PutCard(ctx, card); err != nil {
			t.Fatal(err)
		}
		fund := uuid.NewString()
		tests := []struct {
			name    string
			ref     string
			cardID  string
			delta   int64
			want    error
			balance int64 // of the card afterwards
		}{
			{"fund", fund, card.ID, 300, nil, 1300},
			{"fund repeated", fund, card.ID, 300, nil, 1300},
			{"repeat with another amount", fund, card.ID, -50, nil, 1300},
			{"withdraw", uuid.NewString(), card.ID, -1300, nil, 0},
			{"withdraw too much", uuid.NewString(), card.ID, -1, issuer.ErrInsufficientFunds, 0},
			{"unknown card", uuid.NewString(), "card_nope", 10, issuer.ErrNotFound, 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := s.MoveCard(ctx, issuersandbox.Movement{Reference: tt.ref, CardID: tt.cardID, Delta: tt.delta, CreatedAt: sandboxIssuerNow})
				if !errors.Is(err, tt.want) || err == nil && got.Balance != tt.balance {
					t.Fatalf("MoveCard = balance %d, %v; want %d, %v", got.Balance, err, tt.balance, tt.want)
				}
				if now, err := s.Card(ctx, card.ID); err != nil || now.Balance != tt.balance {
					t.Fatalf("Card = balance %d, %v; want %d", now.Balance, err, tt.balance)
				}
			})
		}
		if n := countItems(t, db, schema.KindSandboxCardMove, fund); n != 1 {
			t.Fatalf("%d claims of %s, want 1", n, fund)
		}
	})

	t.Run("concurrent withdrawals never overdraw", func(t *testing.T) {
		card := sandboxCard("ch_x", 350)
		if _, err := s.PutCard(ctx, card); err != nil {
			t.Fatal(err)
		}
		errs := make([]error, 10)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = s.MoveCard(ctx, issuersandbox.Movement{Reference: uuid.NewString(), CardID: card.ID, Delta: -100, CreatedAt: sandboxIssuerNow})
			})
		}
		wg.Wait()
		done := 0
		for _, err := range errs {
			switch {
			case err == nil:
				done++
			case !errors.Is(err, issuer.ErrInsufficientFunds):
				t.Errorf("MoveCard: %v", err)
			}
		}
		got, err := s.Card(ctx, card.ID)
		if err != nil || done != 3 || got.Balance != 50 {
			t.Fatalf("%d withdrawals of 100 from 350 went through, balance %d (%v); want 3, 50", done, got.Balance, err)
		}
	})

	t.Run("a movement retried after conflicts moves once", func(t *testing.T) {
		card := sandboxCard("ch_x", 0)
		if _, err := s.PutCard(ctx, card); err != nil {
			t.Fatal(err)
		}
		conflicted, calls := storetest.WithConflicts(db, 2)
		got, err := issuerdb.New(conflicted.DB).MoveCard(ctx, issuersandbox.Movement{Reference: uuid.NewString(), CardID: card.ID, Delta: 70, CreatedAt: sandboxIssuerNow})
		if err != nil || got.Balance != 70 || calls.Load() != 3 {
			t.Fatalf("MoveCard = balance %d, %v after %d calls; want 70 after 3", got.Balance, err, calls.Load())
		}
	})

	t.Run("status changes", func(t *testing.T) {
		card := sandboxCard("ch_x", 250)
		if _, err := s.PutCard(ctx, card); err != nil {
			t.Fatal(err)
		}
		freeze := func() (issuersandbox.Card, error) {
			return s.SetCardStatus(ctx, card.ID, issuer.CardActive, issuer.CardFrozen)
		}
		unfreeze := func() (issuersandbox.Card, error) {
			return s.SetCardStatus(ctx, card.ID, issuer.CardFrozen, issuer.CardActive)
		}
		terminate := func() (issuersandbox.Card, error) { return s.TerminateCard(ctx, card.ID) }
		fund := func() (issuersandbox.Card, error) {
			return s.MoveCard(ctx, issuersandbox.Movement{Reference: uuid.NewString(), CardID: card.ID, Delta: 1, CreatedAt: sandboxIssuerNow})
		}
		tests := []struct {
			name    string
			do      func() (issuersandbox.Card, error)
			want    error
			status  issuer.CardStatus
			balance int64
			held    int64
		}{
			{"freeze", freeze, nil, issuer.CardFrozen, 250, 0},
			{"freeze a frozen card", freeze, issuer.ErrCardState, "", 0, 0},
			{"fund a frozen card", fund, issuer.ErrCardState, "", 0, 0},
			{"unfreeze", unfreeze, nil, issuer.CardActive, 250, 0},
			{"unfreeze an active card", unfreeze, issuer.ErrCardState, "", 0, 0},
			{"freeze again", freeze, nil, issuer.CardFrozen, 250, 0},
			{"terminate a frozen card", terminate, nil, issuer.CardTerminated, 0, 250},
			{"terminate again", terminate, nil, issuer.CardTerminated, 0, 250},
			{"unfreeze a terminated card", unfreeze, issuer.ErrCardState, "", 0, 0},
			{"freeze a terminated card", freeze, issuer.ErrCardState, "", 0, 0},
			{"fund a terminated card", fund, issuer.ErrCardState, "", 0, 0},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := tt.do()
				if !errors.Is(err, tt.want) || got.Status != tt.status || got.Balance != tt.balance || got.HeldBalance != tt.held {
					t.Fatalf("= %s balance %d held %d, %v; want %s %d %d, %v",
						got.Status, got.Balance, got.HeldBalance, err, tt.status, tt.balance, tt.held, tt.want)
				}
			})
		}
		for _, err := range []error{
			func() error {
				_, err := s.SetCardStatus(ctx, "card_nope", issuer.CardActive, issuer.CardFrozen)
				return err
			}(),
			func() error { _, err := s.TerminateCard(ctx, "card_nope"); return err }(),
			func() error { _, err := s.Card(ctx, "card_nope"); return err }(),
			func() error { _, err := s.Cardholder(ctx, "ch_nope"); return err }(),
		} {
			if !errors.Is(err, issuer.ErrNotFound) {
				t.Errorf("unknown id: %v, want ErrNotFound", err)
			}
		}
	})

	t.Run("every item is under the sandbox issuer's prefix", func(t *testing.T) {
		out, err := db.Client.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String(db.Table)})
		if err != nil || len(out.Items) == 0 || out.LastEvaluatedKey != nil {
			t.Fatalf("Scan = %d items, %v", len(out.Items), err)
		}
		for _, item := range out.Items {
			var key struct{ PK string }
			if err := attributevalue.UnmarshalMap(item, &key); err != nil || !strings.HasPrefix(key.PK, schema.SandboxIssuerPrefix) {
				t.Errorf("item %s (%v) is outside the sandbox issuer's keys", key.PK, err)
			}
		}
	})
}

// countItems scans db's table for the items of kind typ with reference ref.
func countItems(t *testing.T, db *store.DB, typ, ref string) int {
	t.Helper()
	n := 0
	p := dynamodb.NewScanPaginator(db.Client, &dynamodb.ScanInput{
		TableName:                aws.String(db.Table),
		FilterExpression:         aws.String("#type = :type AND #ref = :ref"),
		ExpressionAttributeNames: map[string]string{"#type": "type", "#ref": "reference"},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":type": &types.AttributeValueMemberS{Value: typ},
			":ref":  &types.AttributeValueMemberS{Value: ref},
		},
	})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n += len(out.Items)
	}
	return n
}
