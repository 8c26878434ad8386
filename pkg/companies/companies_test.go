package companies_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/uuid"

	"payments/pkg/companies"
	"payments/pkg/field"
	"payments/pkg/store"
	"payments/pkg/store/storetest"
)

func newService(t *testing.T) *companies.Service {
	t.Helper()
	return companies.NewService(store.NewCompanies(storetest.NewDB(t)), nil)
}

// forgotten records the companies a cache was told to forget.
type forgotten []string

func (f *forgotten) Forget(id string) { *f = append(*f, id) }

// newForgettingService returns a service whose changes are forgotten from
// f (companies.Forgetting), as the console's are.
func newForgettingService(t *testing.T, f *forgotten) *companies.Service {
	t.Helper()
	return companies.NewService(companies.Forgetting(store.NewCompanies(storetest.NewDB(t)), f), nil)
}

func fieldOf(err error) string {
	var fe *field.Error
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

func TestCreate(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	tests := []struct {
		name      string
		in        string
		kyb       companies.KYBStatus
		wantField string
		wantKYB   companies.KYBStatus
	}{
		{"defaults", "Acme", "", "", companies.KYBPending},
		{"approved", "Acme", companies.KYBApproved, "", companies.KYBApproved},
		{"name trimmed", "  Acme  ", "", "", companies.KYBPending},
		{"empty name", "", "", "name", ""},
		{"blank name", "   ", "", "name", ""},
		{"long name", strings.Repeat("é", 256), "", "name", ""},
		{"255 characters", strings.Repeat("é", 255), "", "", companies.KYBPending},
		{"unknown kyb", "Acme", "MAYBE", "kyb_status", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := svc.Create(ctx, tt.in, tt.kyb)
			if tt.wantField != "" {
				if got := fieldOf(err); got != tt.wantField {
					t.Fatalf("err = %v, want a 400 on %s", err, tt.wantField)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.KYBStatus != tt.wantKYB || !c.IsActive || c.CardSlots != companies.DefaultCardSlots || c.KeyVersion != 1 {
				t.Fatalf("created %+v", c)
			}
			if c.Name != strings.TrimSpace(tt.in) {
				t.Errorf("name = %q", c.Name)
			}
			if _, err := uuid.Parse(c.ID); err != nil {
				t.Errorf("id %q is not a uuid", c.ID)
			}
			if !strings.HasPrefix(c.ClientID, "cli_") || len(c.ClientID) != 4+24 {
				t.Errorf("client_id = %q", c.ClientID)
			}
			if !strings.HasPrefix(c.ClientKey, "sk_") || len(c.ClientKey) != 3+64 {
				t.Errorf("client_key = %q", c.ClientKey)
			}
			got, err := svc.Get(ctx, c.ID)
			if err != nil {
				t.Fatal(err)
			}
			if string(got.KeyHash) != string(companies.HashKey(c.ClientKey)) {
				t.Error("stored hash is not SHA-256 of the key")
			}
		})
	}
}

func TestVerify(t *testing.T) {
	svc := newService(t)
	ctx := context.Background()
	active, err := svc.Create(ctx, "Active", "")
	if err != nil {
		t.Fatal(err)
	}
	disabled, err := svc.Create(ctx, "Disabled", "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Update(ctx, disabled.ID, companies.Patch{IsActive: new(bool)}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name      string
		id, key   string
		wantError error
	}{
		{"valid", active.ClientID, active.ClientKey, nil},
		{"wrong key", active.ClientID, disabled.ClientKey, companies.ErrInvalidCredentials},
		{"unknown id", "cli_000000000000000000000000", active.ClientKey, companies.ErrInvalidCredentials},
		{"disabled", disabled.ClientID, disabled.ClientKey, companies.ErrInvalidCredentials},
		{"empty key", active.ClientID, "", companies.ErrInvalidCredentials},
		// Past DynamoDB's 2048-byte key limit this was a 500.
		{"id past the key limit", strings.Repeat("c", 3000), active.ClientKey, companies.ErrInvalidCredentials},
		{"id one past the bound", active.ClientID + strings.Repeat("x", companies.MaxClientIDLength+1-len(active.ClientID)), active.ClientKey, companies.ErrInvalidCredentials},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := svc.Verify(ctx, tt.id, tt.key)
			if !errors.Is(err, tt.wantError) {
				t.Fatalf("Verify: %v, want %v", err, tt.wantError)
			}
			if err == nil && c.ID != active.ID {
				t.Fatalf("Verify returned %s, want %s", c.ID, active.ID)
			}
		})
	}
}

func TestUpdate(t *testing.T) {
	var changed forgotten
	svc := newForgettingService(t, &changed)
	ctx := context.Background()
	c, err := svc.Create(ctx, "Acme", "")
	if err != nil {
		t.Fatal(err)
	}
	kyb := func(s string) *companies.KYBStatus { k := companies.KYBStatus(s); return &k }
	str := func(s string) *string { return &s }
	num := func(n int) *int { return &n }

	tests := []struct {
		name      string
		id        string
		patch     companies.Patch
		wantField string
		wantErr   error
		check     func(companies.Company) bool
	}{
		{"empty patch", c.ID, companies.Patch{}, "", nil, func(got companies.Company) bool { return got.UpdatedAt.Equal(c.UpdatedAt) }},
		{"approve", c.ID, companies.Patch{KYBStatus: kyb("APPROVED")}, "", nil, func(got companies.Company) bool { return got.KYBStatus == companies.KYBApproved }},
		{"unknown kyb", c.ID, companies.Patch{KYBStatus: kyb("approved")}, "kyb_status", nil, nil},
		{"negative slots", c.ID, companies.Patch{CardSlots: num(-1)}, "card_slots", nil, nil},
		{"zero slots", c.ID, companies.Patch{CardSlots: num(0)}, "", nil, func(got companies.Company) bool { return got.CardSlots == 0 }},
		{"too many slots", c.ID, companies.Patch{CardSlots: num(companies.MaxCardSlots + 1)}, "card_slots", nil, nil},
		{"most slots", c.ID, companies.Patch{CardSlots: num(companies.MaxCardSlots)}, "", nil, func(got companies.Company) bool { return got.CardSlots == companies.MaxCardSlots }},
		{"webhook", c.ID, companies.Patch{WebhookURL: str("https://hooks.example.com/p")}, "", nil, func(got companies.Company) bool { return got.WebhookURL == "https://hooks.example.com/p" }},
		{"http webhook", c.ID, companies.Patch{WebhookURL: str("http://hooks.example.com/p")}, "webhook_url", nil, nil},
		{"relative webhook", c.ID, companies.Patch{WebhookURL: str("/p")}, "webhook_url", nil, nil},
		{"webhook with credentials", c.ID, companies.Patch{WebhookURL: str("https://u:p@example.com/")}, "webhook_url", nil, nil},
		{"clear webhook", c.ID, companies.Patch{WebhookURL: str("")}, "", nil, func(got companies.Company) bool { return got.WebhookURL == "" }},
		{"deactivate", c.ID, companies.Patch{IsActive: new(bool)}, "", nil, func(got companies.Company) bool { return !got.IsActive }},
		{"unknown id", uuid.NewString(), companies.Patch{IsActive: new(bool)}, "", companies.ErrNotFound, nil},
		{"not a uuid", "nope", companies.Patch{IsActive: new(bool)}, "", companies.ErrNotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := svc.Update(ctx, tt.id, tt.patch)
			switch {
			case tt.wantField != "":
				if f := fieldOf(err); f != tt.wantField {
					t.Fatalf("err = %v, want a 400 on %s", err, tt.wantField)
				}
			case tt.wantErr != nil:
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("err = %v, want %v", err, tt.wantErr)
				}
			case err != nil:
				t.Fatal(err)
			case !tt.check(got):
				t.Fatalf("updated company %+v", got)
			}
		})
	}
	if len(changed) == 0 || changed[0] != c.ID {
		t.Errorf("forgotten = %v", changed)
	}
}

func TestRotateKey(t *testing.T) {
	var changed forgotten
	svc := newForgettingService(t, &changed)
	ctx := context.Background()
	c, err := svc.Create(ctx, "Acme", "")
	if err != nil {
		t.Fatal(err)
	}
	creds, err := svc.RotateKey(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if creds.ClientID != c.ClientID || creds.ClientKey == c.ClientKey || len(changed) != 1 || changed[0] != c.ID {
		t.Fatalf("RotateKey = %+v, forgotten %v", creds, changed)
	}
	if _, err := svc.Verify(ctx, c.ClientID, c.ClientKey); !errors.Is(err, companies.ErrInvalidCredentials) {
		t.Errorf("old key: %v", err)
	}
	got, err := svc.Verify(ctx, c.ClientID, creds.ClientKey)
	if err != nil || got.KeyVersion != 2 {
		t.Errorf("new key: %+v, %v", got, err)
	}
	if _, err := svc.RotateKey(ctx, uuid.NewString()); !errors.Is(err, companies.ErrNotFound) {
		t.Errorf("unknown company: %v", err)
	}
}
