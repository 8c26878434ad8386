package store_test

import (
	"bytes"
	"context"
	"errors"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"payments/pkg/companies"
	"payments/pkg/store"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
)

func newCompany(clientID string) companies.Company {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	return companies.Company{
		ID:         uuid.NewString(),
		Name:       "Acme",
		KYBStatus:  companies.KYBPending,
		IsActive:   true,
		ClientID:   clientID,
		KeyHash:    companies.HashKey("sk_secret"),
		KeyVersion: 1,
		CardSlots:  5,
		CreatedAt:  now,
		UpdatedAt:  now,
	}
}

func TestCompaniesStore(t *testing.T) {
	db := storetest.NewDB(t)
	s := store.NewCompanies(db)
	ctx := context.Background()
	c := newCompany("cli_one")
	if err := s.Create(ctx, c); err != nil {
		t.Fatalf("Create: %v", err)
	}

	t.Run("get and get by client id", func(t *testing.T) {
		for name, get := range map[string]func() (companies.Company, error){
			"Get":           func() (companies.Company, error) { return s.Get(ctx, c.ID) },
			"GetByClientID": func() (companies.Company, error) { return s.GetByClientID(ctx, c.ClientID) },
		} {
			got, err := get()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if got.ID != c.ID || got.Name != c.Name || !bytes.Equal(got.KeyHash, c.KeyHash) ||
				got.KeyVersion != 1 || !got.IsActive || got.CardSlots != 5 || !got.CreatedAt.Equal(c.CreatedAt) {
				t.Fatalf("%s = %+v, want %+v", name, got, c)
			}
		}
	})

	t.Run("not found", func(t *testing.T) {
		if _, err := s.Get(ctx, uuid.NewString()); !errors.Is(err, companies.ErrNotFound) {
			t.Errorf("Get unknown: %v", err)
		}
		if _, err := s.GetByClientID(ctx, "cli_nobody"); !errors.Is(err, companies.ErrNotFound) {
			t.Errorf("GetByClientID unknown: %v", err)
		}
		if _, err := s.Update(ctx, uuid.NewString(), companies.Patch{IsActive: aws.Bool(false)}, time.Now()); !errors.Is(err, companies.ErrNotFound) {
			t.Errorf("Update unknown: %v", err)
		}
		if _, err := s.RotateKey(ctx, uuid.NewString(), []byte("h"), time.Now()); !errors.Is(err, companies.ErrNotFound) {
			t.Errorf("RotateKey unknown: %v", err)
		}
	})

	t.Run("duplicate client id refused", func(t *testing.T) {
		if err := s.Create(ctx, newCompany("cli_one")); err == nil {
			t.Fatal("Create with a taken client_id succeeded")
		}
	})

	t.Run("update", func(t *testing.T) {
		kyb := companies.KYBApproved
		later := c.CreatedAt.Add(time.Hour)
		got, err := s.Update(ctx, c.ID, companies.Patch{
			KYBStatus:  &kyb,
			IsActive:   aws.Bool(false),
			WebhookURL: aws.String("https://example.com/hook"),
			CardSlots:  aws.Int(0),
		}, later)
		if err != nil {
			t.Fatal(err)
		}
		if got.KYBStatus != kyb || got.IsActive || got.WebhookURL != "https://example.com/hook" ||
			got.CardSlots != 0 || !got.UpdatedAt.Equal(later) || got.Name != "Acme" {
			t.Fatalf("Update = %+v", got)
		}
	})

	t.Run("rotate", func(t *testing.T) {
		h := companies.HashKey("sk_new")
		got, err := s.RotateKey(ctx, c.ID, h, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if got.KeyVersion != 2 || !bytes.Equal(got.KeyHash, h) || got.ClientID != c.ClientID {
			t.Fatalf("RotateKey = %+v", got)
		}
		read, err := s.GetByClientID(ctx, c.ClientID)
		if err != nil || read.KeyVersion != 2 {
			t.Fatalf("after rotation: %+v, %v", read, err)
		}
	})

	t.Run("lookup item outside the company partition", func(t *testing.T) {
		out, err := db.Client.GetItem(ctx, &dynamodb.GetItemInput{
			TableName: aws.String(db.Table),
			Key: map[string]types.AttributeValue{
				"PK": &types.AttributeValueMemberS{Value: schema.ClientPK("cli_one")},
				"SK": &types.AttributeValueMemberS{Value: schema.ClientSK},
			},
		})
		if err != nil || out.Item == nil {
			t.Fatalf("lookup item: %v, %v", out, err)
		}
		if _, ok := out.Item["key_hash"]; ok {
			t.Error("the lookup item copies the key hash")
		}
	})
}
