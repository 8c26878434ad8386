package issuersandbox_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
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
	"payments/pkg/store/storetest"
	"payments/pkg/vault"
)

var now = time.Date(2026, 2, 28, 9, 30, 0, 456_000_000, time.UTC)

// newSandbox returns a sandbox issuer on a fresh table whose clock is now.
func newSandbox(t *testing.T) *issuersandbox.Issuer {
	t.Helper()
	sb, _, _ := newSandboxDB(t)
	return sb
}

// newSandboxDB returns a sandbox issuer on a fresh table whose clock is
// now, with its table and the vault that seals its card secrets.
func newSandboxDB(t *testing.T) (*issuersandbox.Issuer, *store.DB, *vault.Vault) {
	t.Helper()
	db := storetest.NewDB(t)
	v := newVault(t)
	sb := issuersandbox.New(issuerdb.New(db.DB), v)
	sb.Now = func() time.Time { return now }
	return sb, db, v
}

// newVault returns a vault under a random local master key.
func newVault(t *testing.T) *vault.Vault {
	t.Helper()
	master := make([]byte, vault.DataKeySize)
	rand.Read(master)
	keys, err := vault.NewLocal(master)
	if err != nil {
		t.Fatal(err)
	}
	return vault.New(keys)
}

func cardholderRequest(idNumber string) issuer.CardholderRequest {
	return issuer.CardholderRequest{
		Reference: uuid.NewString(), FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com",
		PhoneCountryCode: "+237", PhoneNumber: "670000001", DocumentType: "PASSPORT",
		IdentificationNumber: idNumber,
	}
}

// enroll enrols a cardholder with the identification number idNumber.
func enroll(t *testing.T, sb *issuersandbox.Issuer, idNumber string) issuer.Cardholder {
	t.Helper()
	h, err := sb.EnrollCardholder(context.Background(), cardholderRequest(idNumber))
	if err != nil {
		t.Fatalf("EnrollCardholder: %v", err)
	}
	return h
}

// issue issues a card of balance to a new cardholder.
func issue(t *testing.T, sb *issuersandbox.Issuer, balance int64) issuer.Card {
	t.Helper()
	h := enroll(t, sb, "CM-100001")
	c, _, err := sb.IssueCard(context.Background(), issuer.CardRequest{Reference: uuid.NewString(), CardholderID: h.ID, Amount: balance})
	if err != nil {
		t.Fatalf("IssueCard: %v", err)
	}
	return c
}

func TestSandboxEnrollCardholder(t *testing.T) {
	ctx := context.Background()
	sb := newSandbox(t)

	tests := []struct {
		name        string
		idNumber    string
		laterActive bool
	}{
		{"ordinary", "CM-123456", true},
		{"777 is blocked after enrolment", "CM-123777", false},
		{"777 inside the number is not", "CM-777123", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := cardholderRequest(tt.idNumber)
			h, err := sb.EnrollCardholder(ctx, req)
			if err != nil || !h.Active || h.Reference != req.Reference || !strings.HasPrefix(h.ID, "ch_") || !h.CreatedAt.Equal(now) {
				t.Fatalf("EnrollCardholder = %+v, %v", h, err)
			}
			want := h
			want.Active = tt.laterActive
			if got, err := sb.Cardholder(ctx, h.ID); err != nil || got != want {
				t.Fatalf("Cardholder = %+v, %v; want %+v", got, err, want)
			}
			req.IdentificationNumber = "CM-000999"
			if got, err := sb.EnrollCardholder(ctx, req); err != nil || got != want {
				t.Fatalf("EnrollCardholder again = %+v, %v; want %+v", got, err, want)
			}
		})
	}

	t.Run("concurrent enrolments of one reference", func(t *testing.T) {
		req := cardholderRequest("CM-222222")
		got := make([]issuer.Cardholder, 10)
		errs := make([]error, len(got))
		var wg sync.WaitGroup
		for i := range got {
			wg.Go(func() { got[i], errs[i] = sb.EnrollCardholder(ctx, req) })
		}
		wg.Wait()
		for i := range got {
			if errs[i] != nil || got[i].ID != got[0].ID || got[i].Reference != req.Reference {
				t.Fatalf("EnrollCardholder %d = %+v, %v; want id %s", i, got[i], errs[i], got[0].ID)
			}
		}
	})

	t.Run("a reference is required", func(t *testing.T) {
		req := cardholderRequest("CM-1")
		req.Reference = ""
		if _, err := sb.EnrollCardholder(ctx, req); !errors.Is(err, issuer.ErrDeclined) {
			t.Fatalf("EnrollCardholder = %v, want ErrDeclined", err)
		}
	})
}

func TestSandboxIssueCard(t *testing.T) {
	ctx := context.Background()
	sb := newSandbox(t)
	holder := enroll(t, sb, "CM-123456")
	declined := enroll(t, sb, "CM-123999")
	blocked := enroll(t, sb, "CM-123777")

	tests := []struct {
		name  string
		req   issuer.CardRequest
		want  error
		brand issuer.Brand
	}{
		{"visa by default", issuer.CardRequest{CardholderID: holder.ID, Amount: 5000}, nil, issuer.Visa},
		{"mastercard", issuer.CardRequest{CardholderID: holder.ID, Brand: issuer.Mastercard}, nil, issuer.Mastercard},
		{"a blocked cardholder's card is issued", issuer.CardRequest{CardholderID: blocked.ID, Amount: 1}, nil, issuer.Visa},
		{"999 is declined", issuer.CardRequest{CardholderID: declined.ID, Amount: 5000}, issuer.ErrDeclined, ""},
		{"unknown cardholder", issuer.CardRequest{CardholderID: "ch_nope", Amount: 1}, issuer.ErrNotFound, ""},
		{"negative amount", issuer.CardRequest{CardholderID: holder.ID, Amount: -1}, issuer.ErrDeclined, ""},
		{"unknown brand", issuer.CardRequest{CardholderID: holder.ID, Brand: "AMEX"}, issuer.ErrDeclined, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.req.Reference = uuid.NewString()
			var first issuer.Card
			var firstSecrets issuer.Secrets
			for attempt := range 2 { // a repeat answers the same card, with the same secrets
				c, sec, err := sb.IssueCard(ctx, tt.req)
				if !errors.Is(err, tt.want) {
					t.Fatalf("IssueCard %d = %+v, %v; want %v", attempt, c, err, tt.want)
				}
				if err != nil {
					if sec != (issuer.Secrets{}) {
						t.Fatalf("IssueCard %d answered %v with secrets", attempt, err)
					}
					continue
				}
				checkSecrets(t, sec, tt.brand)
				want := issuer.Card{
					ID: c.ID, Reference: tt.req.Reference, CardholderID: tt.req.CardholderID, Brand: tt.brand,
					Last4: sec.Number[12:], ExpiryMonth: 2, ExpiryYear: 2029, Balance: tt.req.Amount,
					Available: tt.req.Amount, Status: issuer.CardActive, CreatedAt: now,
				}
				if attempt == 0 {
					first, firstSecrets = c, sec
				}
				if c != want || c != first || !regexp.MustCompile(`^card_[0-9a-f-]{36}$`).MatchString(c.ID) {
					t.Fatalf("IssueCard %d = %+v, want %+v (first %+v)", attempt, c, want, first)
				}
				if sec.Number != firstSecrets.Number || sec.CVV != firstSecrets.CVV {
					t.Fatalf("IssueCard %d gave number %s CVV %s, first %s %s", attempt, sec.Number, sec.CVV, firstSecrets.Number, firstSecrets.CVV)
				}
				if got, err := sb.Card(ctx, c.ID); err != nil || got != want {
					t.Fatalf("Card = %+v, %v; want %+v", got, err, want)
				}
			}
		})
	}

	t.Run("a declined reference stays declined", func(t *testing.T) {
		req := issuer.CardRequest{Reference: uuid.NewString(), CardholderID: declined.ID}
		if _, _, err := sb.IssueCard(ctx, req); !errors.Is(err, issuer.ErrDeclined) {
			t.Fatalf("IssueCard = %v, want ErrDeclined", err)
		}
		req.CardholderID = holder.ID
		if _, _, err := sb.IssueCard(ctx, req); !errors.Is(err, issuer.ErrDeclined) {
			t.Fatalf("IssueCard again for another cardholder = %v, want ErrDeclined", err)
		}
	})
}

// checkSecrets fails t unless s holds a 16-digit, Luhn-valid number with
// the prefix of brand (4 for VISA, 5 for MASTERCARD) and a 3-digit CVV.
func checkSecrets(t *testing.T, s issuer.Secrets, brand issuer.Brand) {
	t.Helper()
	prefix := map[issuer.Brand]string{issuer.Visa: "4", issuer.Mastercard: "5"}[brand]
	if prefix == "" || !sixteenDigits.MatchString(s.Number) || !strings.HasPrefix(s.Number, prefix) || !issuersandbox.ValidCardNumber(s.Number) {
		t.Fatalf("number %q of a %s card: want 16 digits starting with %q, Luhn-valid", s.Number, brand, prefix)
	}
	if !threeDigits.MatchString(s.CVV) {
		t.Fatalf("CVV %q: want 3 digits", s.CVV)
	}
}

var (
	sixteenDigits = regexp.MustCompile(`^[0-9]{16}$`)
	threeDigits   = regexp.MustCompile(`^[0-9]{3}$`)
)

// TestSandboxCardExpiry: a card expires in the month 36 months after the
// month it was issued in, by the sandbox's clock, read in UTC.
func TestSandboxCardExpiry(t *testing.T) {
	ctx := context.Background()
	sb := newSandbox(t)
	holder := enroll(t, sb, "CM-123456")
	tests := []struct {
		name        string
		now         time.Time
		month, year int
	}{
		{"end of February", time.Date(2026, 2, 28, 9, 30, 0, 0, time.UTC), 2, 2029},
		{"first instant of a year", time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC), 1, 2030},
		{"last instant of a year", time.Date(2026, 12, 31, 23, 59, 59, 999_000_000, time.UTC), 12, 2029},
		{"31st of a month", time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC), 10, 2029},
		{"leap day", time.Date(2028, 2, 29, 12, 0, 0, 0, time.UTC), 2, 2031},
		{"a clock east of UTC", time.Date(2026, 3, 1, 0, 30, 0, 0, time.FixedZone("EAT", 3*60*60)), 2, 2029},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sb.Now = func() time.Time { return tt.now }
			c, _, err := sb.IssueCard(ctx, issuer.CardRequest{Reference: uuid.NewString(), CardholderID: holder.ID})
			if err != nil || c.ExpiryMonth != tt.month || c.ExpiryYear != tt.year || !c.CreatedAt.Equal(tt.now) {
				t.Fatalf("IssueCard at %v = expiry %02d/%d, created %v, %v; want %02d/%d",
					tt.now, c.ExpiryMonth, c.ExpiryYear, c.CreatedAt, err, tt.month, tt.year)
			}
		})
	}
}

// TestSandboxConcurrentIssuance: issuances of one reference at once make
// one card, and every answer carries its secrets.
func TestSandboxConcurrentIssuance(t *testing.T) {
	ctx := context.Background()
	sb, db, _ := newSandboxDB(t)
	holder := enroll(t, sb, "CM-123456")
	req := issuer.CardRequest{Reference: uuid.NewString(), CardholderID: holder.ID, Brand: issuer.Mastercard, Amount: 700}
	cards := make([]issuer.Card, 10)
	secrets := make([]issuer.Secrets, len(cards))
	errs := make([]error, len(cards))
	var wg sync.WaitGroup
	for i := range cards {
		wg.Go(func() { cards[i], secrets[i], errs[i] = sb.IssueCard(ctx, req) })
	}
	wg.Wait()
	for i := range cards {
		if errs[i] != nil || cards[i] != cards[0] || secrets[i].Number != secrets[0].Number || secrets[i].CVV != secrets[0].CVV {
			t.Fatalf("IssueCard %d = %+v, number %s CVV %s, %v; want %+v, %s %s",
				i, cards[i], secrets[i].Number, secrets[i].CVV, errs[i], cards[0], secrets[0].Number, secrets[0].CVV)
		}
	}
	checkSecrets(t, secrets[0], issuer.Mastercard)
	if n := len(cardItems(t, db)); n != 1 {
		t.Fatalf("%d card items, want 1", n)
	}
}

// TestSandboxKeepsSecretsSealed: the stored card holds its number and CVV
// only sealed, bound to the card id, and nothing in the table holds them in
// clear.
func TestSandboxKeepsSecretsSealed(t *testing.T) {
	ctx := context.Background()
	sb, db, v := newSandboxDB(t)
	holder := enroll(t, sb, "CM-123456")
	issued := map[string]issuer.Secrets{} // by card id
	for _, brand := range []issuer.Brand{issuer.Visa, issuer.Mastercard} {
		c, sec, err := sb.IssueCard(ctx, issuer.CardRequest{Reference: uuid.NewString(), CardholderID: holder.ID, Brand: brand, Amount: 5000})
		if err != nil {
			t.Fatalf("IssueCard: %v", err)
		}
		issued[c.ID] = sec
	}

	// No item, of whatever kind, holds a number in clear, in any attribute.
	for _, item := range scanItems(t, db) {
		var decoded map[string]any
		if err := attributevalue.UnmarshalMap(item, &decoded); err != nil {
			t.Fatal(err)
		}
		text, err := json.Marshal(decoded)
		if err != nil {
			t.Fatal(err)
		}
		for _, sec := range issued {
			if strings.Contains(string(text), sec.Number) {
				t.Fatalf("an item holds the number %s in clear: %s", sec.Number, text)
			}
		}
	}

	items := cardItems(t, db)
	if len(items) != len(issued) {
		t.Fatalf("%d card items, want %d", len(items), len(issued))
	}
	for _, item := range items {
		var id string
		if err := attributevalue.Unmarshal(item["id"], &id); err != nil {
			t.Fatal(err)
		}
		sec, ok := issued[id]
		if !ok {
			t.Fatalf("card item %s was not issued", id)
		}
		// No plain attribute is the number or the CVV (a 3-digit CVV may
		// be part of other digits, a timestamp's, by chance).
		for name, av := range item {
			var plain string
			switch av := av.(type) {
			case *types.AttributeValueMemberS:
				plain = av.Value
			case *types.AttributeValueMemberN:
				plain = av.Value
			}
			if plain != "" && (plain == sec.Number || plain == sec.CVV) {
				t.Errorf("card %s: attribute %s is a secret in clear", id, name)
			}
		}
		fields := map[string]string{"number": vault.FieldNumber, "cvv": vault.FieldCVC}
		for name, secret := range map[string]string{"number": sec.Number, "cvv": sec.CVV} {
			sealed := sealedAttribute(t, item, name)
			field := fields[name]
			if bytes.Contains(sealed.Ciphertext, []byte(sec.Number)) || bytes.Equal(sealed.Ciphertext, []byte(secret)) {
				t.Errorf("card %s: %s ciphertext holds the secret in clear", id, name)
			}
			if got, err := v.Open(ctx, sealed, issuersandbox.SecretField(id, field)); err != nil || string(got) != secret {
				t.Errorf("card %s: %s opens to %q, %v; want %q", id, name, got, err, secret)
			}
			if _, err := v.Open(ctx, sealed, issuersandbox.SecretField(id+"x", field)); !errors.Is(err, vault.ErrOpen) {
				t.Errorf("card %s: %s opens under another card id: %v", id, name, err)
			}
			other := fields["number"]
			if field == other {
				other = fields["cvv"]
			}
			if _, err := v.Open(ctx, sealed, issuersandbox.SecretField(id, other)); !errors.Is(err, vault.ErrOpen) {
				t.Errorf("card %s: %s opens as the other field: %v", id, name, err)
			}
		}
	}
}

// sealedAttribute returns the attribute name of a card item, which must be
// a map of exactly the parts of a vault.Sealed: key_id a string, data_key,
// nonce and ciphertext binary and not empty.
func sealedAttribute(t *testing.T, item map[string]types.AttributeValue, name string) vault.Sealed {
	t.Helper()
	m, ok := item[name].(*types.AttributeValueMemberM)
	if !ok {
		t.Fatalf("attribute %s is %T, want a map", name, item[name])
	}
	parts := map[string][]byte{}
	for _, part := range []string{"data_key", "nonce", "ciphertext"} {
		b, ok := m.Value[part].(*types.AttributeValueMemberB)
		if !ok || len(b.Value) == 0 {
			t.Fatalf("attribute %s.%s is %T, want binary", name, part, m.Value[part])
		}
		parts[part] = b.Value
	}
	keyID, ok := m.Value["key_id"].(*types.AttributeValueMemberS)
	if !ok || !strings.HasPrefix(keyID.Value, "local:") || len(m.Value) != 4 {
		t.Fatalf("attribute %s = %v, want key_id, data_key, nonce and ciphertext", name, m.Value)
	}
	return vault.Sealed{KeyID: keyID.Value, DataKey: parts["data_key"], Nonce: parts["nonce"], Ciphertext: parts["ciphertext"]}
}

// scanItems returns every item of db's table.
func scanItems(t *testing.T, db *store.DB) []map[string]types.AttributeValue {
	t.Helper()
	var items []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(db.Client, &dynamodb.ScanInput{TableName: aws.String(db.Table), ConsistentRead: aws.Bool(true)})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, out.Items...)
	}
	return items
}

// cardItems returns the items of db's table that are sandbox cards.
func cardItems(t *testing.T, db *store.DB) []map[string]types.AttributeValue {
	t.Helper()
	var cards []map[string]types.AttributeValue
	for _, item := range scanItems(t, db) {
		if typ, ok := item["type"].(*types.AttributeValueMemberS); ok && typ.Value == "sandbox_card" {
			cards = append(cards, item)
		}
	}
	return cards
}

// TestSandboxWithoutSealer: a sandbox made without a sealer enrols
// cardholders but issues no card, and records nothing of the attempt.
func TestSandboxWithoutSealer(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	sb := issuersandbox.New(issuerdb.New(db.DB), nil)
	h := enroll(t, sb, "CM-123456")
	if got, err := sb.Cardholder(ctx, h.ID); err != nil || got != h {
		t.Fatalf("Cardholder = %+v, %v; want %+v", got, err, h)
	}
	req := issuer.CardRequest{Reference: uuid.NewString(), CardholderID: h.ID}
	c, sec, err := sb.IssueCard(ctx, req)
	if !errors.Is(err, issuer.ErrUnavailable) || c != (issuer.Card{}) || sec != (issuer.Secrets{}) {
		t.Fatalf("IssueCard = %+v, %v; want ErrUnavailable", c, err)
	}
	// The reference is free: a sandbox with a sealer issues on it.
	if _, sec, err := issuersandbox.New(issuerdb.New(db.DB), newVault(t)).IssueCard(ctx, req); err != nil {
		t.Fatalf("IssueCard with a sealer = %v", err)
	} else {
		checkSecrets(t, sec, issuer.Visa)
	}
}

// TestSandboxSecretsUnderAnotherKey: a repeated issuance whose secrets were
// sealed under another master key is ErrUnavailable, never other secrets.
func TestSandboxSecretsUnderAnotherKey(t *testing.T) {
	ctx := context.Background()
	sb, db, _ := newSandboxDB(t)
	h := enroll(t, sb, "CM-123456")
	req := issuer.CardRequest{Reference: uuid.NewString(), CardholderID: h.ID}
	if _, _, err := sb.IssueCard(ctx, req); err != nil {
		t.Fatal(err)
	}
	other := issuersandbox.New(issuerdb.New(db.DB), newVault(t))
	if c, sec, err := other.IssueCard(ctx, req); !errors.Is(err, issuer.ErrUnavailable) || sec != (issuer.Secrets{}) {
		t.Fatalf("IssueCard under another key = %+v, %v; want ErrUnavailable", c, err)
	}
}

func TestSandboxMovements(t *testing.T) {
	ctx := context.Background()
	sb := newSandbox(t)
	card := issue(t, sb, 1000)
	fund := issuer.Movement{Reference: uuid.NewString(), CardID: card.ID, Amount: 250}
	withdraw := issuer.Movement{Reference: uuid.NewString(), CardID: card.ID, Amount: 1200}

	tests := []struct {
		name    string
		do      func(context.Context, issuer.Movement) (issuer.Card, error)
		m       issuer.Movement
		want    error
		balance int64 // of the card afterwards
	}{
		{"fund", sb.FundCard, fund, nil, 1250},
		{"fund repeated", sb.FundCard, fund, nil, 1250},
		{"withdraw", sb.WithdrawCard, withdraw, nil, 50},
		{"withdraw repeated", sb.WithdrawCard, withdraw, nil, 50},
		{"a fund's reference reused to withdraw", sb.WithdrawCard, issuer.Movement{Reference: fund.Reference, CardID: card.ID, Amount: 50}, nil, 50},
		{"insufficient funds", sb.WithdrawCard, issuer.Movement{Reference: uuid.NewString(), CardID: card.ID, Amount: 51}, issuer.ErrInsufficientFunds, 50},
		{"zero amount", sb.FundCard, issuer.Movement{Reference: uuid.NewString(), CardID: card.ID}, issuer.ErrDeclined, 50},
		{"negative amount", sb.WithdrawCard, issuer.Movement{Reference: uuid.NewString(), CardID: card.ID, Amount: -5}, issuer.ErrDeclined, 50},
		{"no reference", sb.FundCard, issuer.Movement{CardID: card.ID, Amount: 5}, issuer.ErrDeclined, 50},
		{"unknown card", sb.FundCard, issuer.Movement{Reference: uuid.NewString(), CardID: "card_nope", Amount: 5}, issuer.ErrNotFound, 50},
		{"withdraw the rest", sb.WithdrawCard, issuer.Movement{Reference: uuid.NewString(), CardID: card.ID, Amount: 50}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.do(ctx, tt.m)
			if !errors.Is(err, tt.want) || err == nil && (got.ID != card.ID || got.Balance != tt.balance) {
				t.Fatalf("= %+v, %v; want balance %d, %v", got, err, tt.balance, tt.want)
			}
			if after, err := sb.Card(ctx, card.ID); err != nil || after.Balance != tt.balance {
				t.Fatalf("Card = balance %d, %v; want %d", after.Balance, err, tt.balance)
			}
		})
	}

	t.Run("concurrent withdrawals never overdraw", func(t *testing.T) {
		card := issue(t, sb, 730)
		errs := make([]error, 10)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() {
				_, errs[i] = sb.WithdrawCard(ctx, issuer.Movement{Reference: uuid.NewString(), CardID: card.ID, Amount: 100})
			})
		}
		wg.Wait()
		done := 0
		for _, err := range errs {
			switch {
			case err == nil:
				done++
			case !errors.Is(err, issuer.ErrInsufficientFunds):
				t.Errorf("WithdrawCard: %v", err)
			}
		}
		got, err := sb.Card(ctx, card.ID)
		if err != nil || done != 7 || got.Balance != 730-int64(done)*100 {
			t.Fatalf("%d withdrawals of 100 from 730 went through, balance %d (%v); want 7, 30", done, got.Balance, err)
		}
	})
}

// TestSandboxPostings: a posting moves the card's balance and holds once
// per reference, whatever they are, on an active or a frozen card; a
// terminated card, which holds nothing, takes none.
func TestSandboxPostings(t *testing.T) {
	ctx := context.Background()
	sb := newSandbox(t)
	card := issue(t, sb, 1000)
	hold := issuer.Posting{Reference: "evt_hold", CardID: card.ID, HeldDelta: 400}
	settle := issuer.Posting{Reference: "evt_settle#settlement", CardID: card.ID, BalanceDelta: -300, HeldDelta: -400}
	freeze := func() { sb.FreezeCard(ctx, card.ID) }

	tests := []struct {
		name               string
		before             func()
		p                  issuer.Posting
		want               error
		balance, available int64 // of the card afterwards
	}{
		{"hold", nil, hold, nil, 1000, 600},
		{"hold repeated", nil, hold, nil, 1000, 600},
		{"settlement releasing the whole hold", nil, settle, nil, 700, 700},
		{"settlement repeated", nil, settle, nil, 700, 700},
		{"a fee on a frozen card", freeze, issuer.Posting{Reference: "evt_fee", CardID: card.ID, BalanceDelta: -50}, nil, 650, 650},
		{"a refund on a frozen card", nil, issuer.Posting{Reference: "evt_refund", CardID: card.ID, BalanceDelta: 100}, nil, 750, 750},
		{"a hold beyond the balance", nil, issuer.Posting{Reference: "evt_big", CardID: card.ID, HeldDelta: 800}, nil, 750, -50},
		{"moving nothing", nil, issuer.Posting{Reference: "evt_none", CardID: card.ID}, issuer.ErrDeclined, 750, -50},
		{"no reference", nil, issuer.Posting{CardID: card.ID, HeldDelta: 1}, issuer.ErrDeclined, 750, -50},
		{"unknown card", nil, issuer.Posting{Reference: "evt_nope", CardID: "card_nope", HeldDelta: 1}, issuer.ErrNotFound, 750, -50},
		{"terminated", func() { sb.TerminateCard(ctx, card.ID) }, issuer.Posting{Reference: "evt_late", CardID: card.ID, HeldDelta: -800}, issuer.ErrCardState, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.before != nil {
				tt.before()
			}
			got, err := sb.PostCard(ctx, tt.p)
			if !errors.Is(err, tt.want) || err == nil && (got.ID != card.ID || got.Balance != tt.balance || got.Available != tt.available) {
				t.Fatalf("= %+v, %v; want balance %d, available %d, %v", got, err, tt.balance, tt.available, tt.want)
			}
			if after, err := sb.Card(ctx, card.ID); err != nil || after.Balance != tt.balance || after.Available != tt.available {
				t.Fatalf("Card = balance %d, available %d, %v; want %d, %d", after.Balance, after.Available, err, tt.balance, tt.available)
			}
		})
	}

	t.Run("concurrent postings each apply once", func(t *testing.T) {
		card := issue(t, sb, 1000)
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				p := issuer.Posting{Reference: fmt.Sprintf("evt_%s_%d", card.ID, i%10), CardID: card.ID, BalanceDelta: -10, HeldDelta: 5}
				if _, err := sb.PostCard(ctx, p); err != nil {
					t.Errorf("PostCard: %v", err)
				}
			})
		}
		wg.Wait()
		if got, err := sb.Card(ctx, card.ID); err != nil || got.Balance != 900 || got.Available != 850 {
			t.Fatalf("Card = balance %d, available %d, %v; want 900, 850", got.Balance, got.Available, err)
		}
	})
}

func TestSandboxCardStates(t *testing.T) {
	ctx := context.Background()
	sb := newSandbox(t)
	card := issue(t, sb, 400)
	withdraw := func(ctx context.Context, id string) (issuer.Card, error) {
		return sb.WithdrawCard(ctx, issuer.Movement{Reference: uuid.NewString(), CardID: id, Amount: 100})
	}
	fundCard := func(ctx context.Context, id string) (issuer.Card, error) {
		return sb.FundCard(ctx, issuer.Movement{Reference: uuid.NewString(), CardID: id, Amount: 100})
	}
	terminate := func(ctx context.Context, id string) (issuer.Card, error) {
		c, held, err := sb.TerminateCard(ctx, id)
		if err == nil && held != 200 {
			t.Errorf("TerminateCard held %d, want 200", held)
		}
		return c, err
	}

	tests := []struct {
		name    string
		do      func(context.Context, string) (issuer.Card, error)
		want    error
		status  issuer.CardStatus // of the card afterwards
		balance int64
	}{
		{"unfreeze an active card", sb.UnfreezeCard, issuer.ErrCardState, issuer.CardActive, 400},
		{"freeze", sb.FreezeCard, nil, issuer.CardFrozen, 400},
		{"freeze a frozen card", sb.FreezeCard, issuer.ErrCardState, issuer.CardFrozen, 400},
		{"withdraw from a frozen card", withdraw, nil, issuer.CardFrozen, 300},
		{"unfreeze", sb.UnfreezeCard, nil, issuer.CardActive, 300},
		{"withdraw", withdraw, nil, issuer.CardActive, 200},
		{"freeze again", sb.FreezeCard, nil, issuer.CardFrozen, 200},
		{"fund a frozen card", fundCard, issuer.ErrCardState, issuer.CardFrozen, 200},
		{"terminate", terminate, nil, issuer.CardTerminated, 0},
		{"terminate again", terminate, nil, issuer.CardTerminated, 0},
		{"unfreeze a terminated card", sb.UnfreezeCard, issuer.ErrCardState, issuer.CardTerminated, 0},
		{"freeze a terminated card", sb.FreezeCard, issuer.ErrCardState, issuer.CardTerminated, 0},
		{"withdraw from a terminated card", withdraw, issuer.ErrCardState, issuer.CardTerminated, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.do(ctx, card.ID)
			if !errors.Is(err, tt.want) || err == nil && (got.Status != tt.status || got.Balance != tt.balance) {
				t.Fatalf("= %+v, %v; want %s balance %d, %v", got, err, tt.status, tt.balance, tt.want)
			}
			if after, err := sb.Card(ctx, card.ID); err != nil || after.Status != tt.status || after.Balance != tt.balance {
				t.Fatalf("Card = %+v, %v; want %s balance %d", after, err, tt.status, tt.balance)
			}
		})
	}

	t.Run("an active card terminates too", func(t *testing.T) {
		card := issue(t, sb, 300)
		if c, held, err := sb.TerminateCard(ctx, card.ID); err != nil || held != 300 || c.Status != issuer.CardTerminated || c.Balance != 0 {
			t.Fatalf("TerminateCard = %+v, %d, %v", c, held, err)
		}
	})
}

// TestSandboxUnknownIDs: every call on an id the issuer does not know is
// ErrNotFound.
func TestSandboxUnknownIDs(t *testing.T) {
	ctx := context.Background()
	sb := newSandbox(t)
	m := issuer.Movement{Reference: uuid.NewString(), CardID: "card_nope", Amount: 1}
	tests := []struct {
		name string
		call func() error
	}{
		{"Cardholder", func() error { _, err := sb.Cardholder(ctx, "ch_nope"); return err }},
		{"IssueCard", func() error {
			_, _, err := sb.IssueCard(ctx, issuer.CardRequest{Reference: uuid.NewString(), CardholderID: "ch_nope"})
			return err
		}},
		{"Card", func() error { _, err := sb.Card(ctx, "card_nope"); return err }},
		{"FundCard", func() error { _, err := sb.FundCard(ctx, m); return err }},
		{"WithdrawCard", func() error { _, err := sb.WithdrawCard(ctx, m); return err }},
		{"FreezeCard", func() error { _, err := sb.FreezeCard(ctx, "card_nope"); return err }},
		{"UnfreezeCard", func() error { _, err := sb.UnfreezeCard(ctx, "card_nope"); return err }},
		{"TerminateCard", func() error { _, _, err := sb.TerminateCard(ctx, "card_nope"); return err }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, issuer.ErrNotFound) {
				t.Fatalf("err = %v, want ErrNotFound", err)
			}
		})
	}
}

// brokenStore is a sandbox store that cannot be reached.
type brokenStore struct{}

var errBroken = errors.New("connection refused")

func (brokenStore) PutCardholder(context.Context, issuersandbox.Cardholder) (issuersandbox.Cardholder, error) {
	return issuersandbox.Cardholder{}, errBroken
}

func (brokenStore) Cardholder(context.Context, string) (issuersandbox.Cardholder, error) {
	return issuersandbox.Cardholder{}, errBroken
}

func (brokenStore) PutCard(context.Context, issuersandbox.Card) (issuersandbox.Card, error) {
	return issuersandbox.Card{}, errBroken
}

func (brokenStore) Card(context.Context, string) (issuersandbox.Card, error) {
	return issuersandbox.Card{}, errBroken
}

func (brokenStore) MoveCard(context.Context, issuersandbox.Movement) (issuersandbox.Card, error) {
	return issuersandbox.Card{}, errBroken
}

func (brokenStore) PostCard(context.Context, issuersandbox.Movement) (issuersandbox.Card, error) {
	return issuersandbox.Card{}, errBroken
}

func (brokenStore) SetCardStatus(context.Context, string, issuer.CardStatus, issuer.CardStatus) (issuersandbox.Card, error) {
	return issuersandbox.Card{}, errBroken
}

func (brokenStore) TerminateCard(context.Context, string) (issuersandbox.Card, error) {
	return issuersandbox.Card{}, errBroken
}

func (brokenStore) PutDispute(context.Context, issuersandbox.Dispute, []issuersandbox.Notice) (issuersandbox.Dispute, error) {
	return issuersandbox.Dispute{}, errBroken
}

func (brokenStore) KeepNotice(context.Context, issuersandbox.Notice) error { return errBroken }

func (brokenStore) DueNotices(context.Context, time.Time, int) ([]issuersandbox.Notice, error) {
	return nil, errBroken
}

func (brokenStore) DelayNotice(context.Context, string, int, time.Time) error { return errBroken }

func (brokenStore) AckNotice(context.Context, string) error { return errBroken }

// TestSandboxStoreFailureIsUnavailable: a store that fails makes every call
// ErrUnavailable, never one of the issuer's answers.
func TestSandboxStoreFailureIsUnavailable(t *testing.T) {
	ctx := context.Background()
	sb := issuersandbox.New(brokenStore{}, newVault(t))
	m := issuer.Movement{Reference: "tx", CardID: "card_x", Amount: 1}
	tests := []struct {
		name string
		call func() error
	}{
		{"EnrollCardholder", func() error { _, err := sb.EnrollCardholder(ctx, cardholderRequest("CM-1")); return err }},
		{"Cardholder", func() error { _, err := sb.Cardholder(ctx, "ch_x"); return err }},
		{"IssueCard", func() error {
			_, _, err := sb.IssueCard(ctx, issuer.CardRequest{Reference: "card", CardholderID: "ch_x"})
			return err
		}},
		{"Card", func() error { _, err := sb.Card(ctx, "card_x"); return err }},
		{"FundCard", func() error { _, err := sb.FundCard(ctx, m); return err }},
		{"WithdrawCard", func() error { _, err := sb.WithdrawCard(ctx, m); return err }},
		{"FreezeCard", func() error { _, err := sb.FreezeCard(ctx, "card_x"); return err }},
		{"UnfreezeCard", func() error { _, err := sb.UnfreezeCard(ctx, "card_x"); return err }},
		{"TerminateCard", func() error { _, _, err := sb.TerminateCard(ctx, "card_x"); return err }},
		{"PostCard", func() error {
			_, err := sb.PostCard(ctx, issuer.Posting{Reference: "evt", CardID: "card_x", HeldDelta: 1})
			return err
		}},
		{"Acknowledge", func() error { return sb.Acknowledge(ctx, "evt") }},
		{"OpenDispute", func() error {
			_, err := sb.OpenDispute(ctx, issuer.DisputeRequest{Reference: "dispute", CardID: "card_x", TransactionID: "ntx_x",
				Reason: issuer.DisputeFraudulent, Amount: 100})
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, issuer.ErrUnavailable) || !strings.Contains(err.Error(), errBroken.Error()) {
				t.Fatalf("err = %v, want ErrUnavailable naming the failure", err)
			}
		})
	}
}
