package issuer_test

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"payments/pkg/providers/issuer"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
)

var now = time.Date(2026, 2, 28, 9, 30, 0, 456_000_000, time.UTC)

// newSandbox returns a sandbox issuer on a fresh table whose clock is now.
func newSandbox(t *testing.T) *issuer.Sandbox {
	t.Helper()
	sb := issuer.NewSandbox(store.NewSandboxIssuer(storetest.NewDB(t)))
	sb.Now = func() time.Time { return now }
	return sb
}

func cardholderRequest(idNumber string) issuer.CardholderRequest {
	return issuer.CardholderRequest{
		Reference: uuid.NewString(), FirstName: "Ada", LastName: "Lovelace", Email: "ada@example.com",
		PhoneCountryCode: "+237", PhoneNumber: "670000001", DocumentType: "PASSPORT",
		IdentificationNumber: idNumber,
	}
}

// enroll enrols a cardholder with the identification number idNumber.
func enroll(t *testing.T, sb *issuer.Sandbox, idNumber string) issuer.Cardholder {
	t.Helper()
	h, err := sb.EnrollCardholder(context.Background(), cardholderRequest(idNumber))
	if err != nil {
		t.Fatalf("EnrollCardholder: %v", err)
	}
	return h
}

// issue issues a card of balance to a new cardholder.
func issue(t *testing.T, sb *issuer.Sandbox, balance int64) issuer.Card {
	t.Helper()
	h := enroll(t, sb, "CM-100001")
	c, err := sb.IssueCard(context.Background(), issuer.CardRequest{Reference: uuid.NewString(), CardholderID: h.ID, Amount: balance})
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
			for attempt := range 2 { // a repeat answers the same
				c, err := sb.IssueCard(ctx, tt.req)
				if !errors.Is(err, tt.want) {
					t.Fatalf("IssueCard %d = %+v, %v; want %v", attempt, c, err, tt.want)
				}
				if err != nil {
					continue
				}
				want := issuer.Card{
					ID: c.ID, Reference: tt.req.Reference, CardholderID: tt.req.CardholderID, Brand: tt.brand,
					Last4: c.Last4, ExpiryMonth: 2, ExpiryYear: 2029, Balance: tt.req.Amount,
					Status: issuer.CardActive, CreatedAt: now,
				}
				if c != want || !regexp.MustCompile(`^card_[0-9a-f-]{36}$`).MatchString(c.ID) || !regexp.MustCompile(`^[0-9]{4}$`).MatchString(c.Last4) {
					t.Fatalf("IssueCard %d = %+v, want %+v", attempt, c, want)
				}
				if got, err := sb.Card(ctx, c.ID); err != nil || got != want {
					t.Fatalf("Card = %+v, %v; want %+v", got, err, want)
				}
			}
		})
	}

	t.Run("a declined reference stays declined", func(t *testing.T) {
		req := issuer.CardRequest{Reference: uuid.NewString(), CardholderID: declined.ID}
		if _, err := sb.IssueCard(ctx, req); !errors.Is(err, issuer.ErrDeclined) {
			t.Fatalf("IssueCard = %v, want ErrDeclined", err)
		}
		req.CardholderID = holder.ID
		if _, err := sb.IssueCard(ctx, req); !errors.Is(err, issuer.ErrDeclined) {
			t.Fatalf("IssueCard again for another cardholder = %v, want ErrDeclined", err)
		}
	})
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

func TestSandboxCardStates(t *testing.T) {
	ctx := context.Background()
	sb := newSandbox(t)
	card := issue(t, sb, 400)
	withdraw := func(ctx context.Context, id string) (issuer.Card, error) {
		return sb.WithdrawCard(ctx, issuer.Movement{Reference: uuid.NewString(), CardID: id, Amount: 100})
	}
	terminate := func(ctx context.Context, id string) (issuer.Card, error) {
		c, held, err := sb.TerminateCard(ctx, id)
		if err == nil && held != 300 {
			t.Errorf("TerminateCard held %d, want 300", held)
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
		{"withdraw from a frozen card", withdraw, issuer.ErrCardState, issuer.CardFrozen, 400},
		{"unfreeze", sb.UnfreezeCard, nil, issuer.CardActive, 400},
		{"withdraw", withdraw, nil, issuer.CardActive, 300},
		{"freeze again", sb.FreezeCard, nil, issuer.CardFrozen, 300},
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
			_, err := sb.IssueCard(ctx, issuer.CardRequest{Reference: uuid.NewString(), CardholderID: "ch_nope"})
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

func (brokenStore) PutCardholder(context.Context, issuer.SandboxCardholder) (issuer.SandboxCardholder, error) {
	return issuer.SandboxCardholder{}, errBroken
}

func (brokenStore) Cardholder(context.Context, string) (issuer.SandboxCardholder, error) {
	return issuer.SandboxCardholder{}, errBroken
}

func (brokenStore) PutCard(context.Context, issuer.SandboxCard) (issuer.SandboxCard, error) {
	return issuer.SandboxCard{}, errBroken
}

func (brokenStore) Card(context.Context, string) (issuer.SandboxCard, error) {
	return issuer.SandboxCard{}, errBroken
}

func (brokenStore) MoveCard(context.Context, issuer.SandboxMovement) (issuer.SandboxCard, error) {
	return issuer.SandboxCard{}, errBroken
}

func (brokenStore) SetCardStatus(context.Context, string, issuer.CardStatus, issuer.CardStatus) (issuer.SandboxCard, error) {
	return issuer.SandboxCard{}, errBroken
}

func (brokenStore) TerminateCard(context.Context, string) (issuer.SandboxCard, error) {
	return issuer.SandboxCard{}, errBroken
}

// TestSandboxStoreFailureIsUnavailable: a store that fails makes every call
// ErrUnavailable, never one of the issuer's answers.
func TestSandboxStoreFailureIsUnavailable(t *testing.T) {
	ctx := context.Background()
	sb := issuer.NewSandbox(brokenStore{})
	m := issuer.Movement{Reference: "tx", CardID: "card_x", Amount: 1}
	tests := []struct {
		name string
		call func() error
	}{
		{"EnrollCardholder", func() error { _, err := sb.EnrollCardholder(ctx, cardholderRequest("CM-1")); return err }},
		{"Cardholder", func() error { _, err := sb.Cardholder(ctx, "ch_x"); return err }},
		{"IssueCard", func() error {
			_, err := sb.IssueCard(ctx, issuer.CardRequest{Reference: "card", CardholderID: "ch_x"})
			return err
		}},
		{"Card", func() error { _, err := sb.Card(ctx, "card_x"); return err }},
		{"FundCard", func() error { _, err := sb.FundCard(ctx, m); return err }},
		{"WithdrawCard", func() error { _, err := sb.WithdrawCard(ctx, m); return err }},
		{"FreezeCard", func() error { _, err := sb.FreezeCard(ctx, "card_x"); return err }},
		{"UnfreezeCard", func() error { _, err := sb.UnfreezeCard(ctx, "card_x"); return err }},
		{"TerminateCard", func() error { _, _, err := sb.TerminateCard(ctx, "card_x"); return err }},
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
