package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
	"payments/pkg/webhooks"
)

// putRaw writes item as it is, as a version of before wrote it.
func putRaw(t *testing.T, db *store.DB, item map[string]types.AttributeValue) {
	t.Helper()
	if _, err := db.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(db.Table), Item: item}); err != nil {
		t.Fatal(err)
	}
}

// scanTable returns every item of the table.
func scanTable(t *testing.T, db *store.DB) []map[string]types.AttributeValue {
	t.Helper()
	var items []map[string]types.AttributeValue
	p := dynamodb.NewScanPaginator(db.Client, &dynamodb.ScanInput{TableName: aws.String(db.Table)})
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		items = append(items, page.Items...)
	}
	return items
}

// holds reports whether av, or any value inside it, holds secret in its
// text or its bytes.
func holds(av types.AttributeValue, secret string) bool {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return strings.Contains(v.Value, secret)
	case *types.AttributeValueMemberB:
		return strings.Contains(string(v.Value), secret)
	case *types.AttributeValueMemberSS:
		return strings.Contains(strings.Join(v.Value, "\x00"), secret)
	case *types.AttributeValueMemberM:
		for _, x := range v.Value {
			if holds(x, secret) {
				return true
			}
		}
	case *types.AttributeValueMemberL:
		for _, x := range v.Value {
			if holds(x, secret) {
				return true
			}
		}
	}
	return false
}

// noSecretInClear fails the test when an item of the table has a secret
// or previous_secret attribute, or holds one of secrets in any attribute.
func noSecretInClear(t *testing.T, db *store.DB, secrets ...string) {
	t.Helper()
	for _, item := range scanTable(t, db) {
		for name, av := range item {
			if name == "secret" || name == "previous_secret" {
				t.Errorf("item %s %s: attribute %s in clear", dynamo.StringAttr(item, "PK"), dynamo.StringAttr(item, "SK"), name)
			}
			for _, s := range secrets {
				if holds(av, s) {
					t.Errorf("item %s %s: attribute %s holds the secret %q", dynamo.StringAttr(item, "PK"), dynamo.StringAttr(item, "SK"), name, s)
				}
			}
		}
	}
}

// TestWebhookSecretsStoredInClearAreSealed: endpoint items written before
// secrets were sealed (the console's, without a version, and a
// company's endpoint within a rotation's overlap) are read with their
// secrets in clear and sign as before; the sweeper's sealing, a few items
// per page, seals every one of them, once, across pages; afterwards
// no attribute of the table holds a secret in clear, the endpoints read
// sealed, their secrets open to the same values and still sign, and the
// sealing does nothing more. A store never writes a secret in clear.
func TestWebhookSecretsStoredInClearAreSealed(t *testing.T) {
	ctx := context.Background()
	db := storetest.NewDB(t)
	s := store.NewWebhooks(db)
	v := testVault(t)
	store.SetClearSecretsPageSizeForTest(t, 2)
	now := time.Now().UTC().Truncate(time.Millisecond)
	co, other := newWebhookCompany(t, db), newWebhookCompany(t, db)
	epID := uuid.NewString()
	const consoleSecret, otherSecret, current, previous = "legacy-console-secret-0123456789", "legacy-other-secret-0123456789", "whsec_legacy_current_0123", "whsec_legacy_previous_0123"
	created := now.Add(-48 * time.Hour).Format(time.RFC3339Nano)
	putRaw(t, db, map[string]types.AttributeValue{ // the signing secret of before: no version
		"PK": dynamo.Str(schema.CompanyPK(co)), "SK": dynamo.Str(schema.WebhookSecretSK), "type": dynamo.Str(schema.KindWebhookSecret), "company_id": dynamo.Str(co),
		"secret": dynamo.Str(consoleSecret),
	})
	putRaw(t, db, map[string]types.AttributeValue{
		"PK": dynamo.Str(schema.CompanyPK(other)), "SK": dynamo.Str(schema.WebhookSecretSK), "type": dynamo.Str(schema.KindWebhookSecret), "company_id": dynamo.Str(other),
		"secret": dynamo.Str(otherSecret), "version": dynamo.Num(2), "created_at": dynamo.Str(created),
	})
	putRaw(t, db, map[string]types.AttributeValue{
		"PK": dynamo.Str(schema.CompanyPK(co)), "SK": dynamo.Str(schema.WebhookEndpointSK(epID)), "type": dynamo.Str(schema.KindWebhookEndpoint),
		"id": dynamo.Str(epID), "company_id": dynamo.Str(co), "url": dynamo.Str("https://hooks.example.com/in"),
		"enabled_events": &types.AttributeValueMemberL{Value: []types.AttributeValue{dynamo.Str("*")}}, "status": dynamo.Str("enabled"),
		"secret": dynamo.Str(current), "previous_secret": dynamo.Str(previous),
		"previous_expires_at": dynamo.Str(now.Add(time.Hour).Format(time.RFC3339Nano)), "version": dynamo.Num(3),
		"created_at": dynamo.Str(created), "updated_at": dynamo.Str(created),
	})
	want := map[string][2]string{co: {consoleSecret, ""}, epID: {current, previous}, other: {otherSecret, ""}}
	body := []byte(`{"id":"evt_1"}`)

	// check reads every endpoint of both companies: in clear (before the
	// sealing) or sealed (after it), each signing with its secrets.
	check := func(sealed bool) {
		t.Helper()
		for _, c := range []string{co, other} {
			eps, err := s.Endpoints(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range eps {
				w, ok := want[e.ID]
				if !ok {
					t.Fatalf("endpoint %s", e.ID)
				}
				delete(want, e.ID)
				if inClear := e.Secret != ""; inClear == sealed || e.SealedSecret.IsZero() != !sealed {
					t.Fatalf("endpoint %s: secret %q, sealed %v; want sealed %v", e.ID, e.Secret, !e.SealedSecret.IsZero(), sealed)
				}
				opened, err := webhooks.OpenSecrets(ctx, v, e, now)
				if err != nil || opened.Secret != w[0] || opened.PreviousSecret != w[1] {
					t.Fatalf("endpoint %s opened %q %q, %v; want %q", e.ID, opened.Secret, opened.PreviousSecret, err, w)
				}
				header := opened.Sign(now, body)
				for _, secret := range w {
					if err := webhooks.Verify(header, body, secret, time.Minute, now); secret != "" && err != nil {
						t.Fatalf("endpoint %s: %v", e.ID, err)
					}
				}
			}
		}
		if len(want) != 0 {
			t.Fatalf("endpoints not read: %v", want)
		}
		want = map[string][2]string{co: {consoleSecret, ""}, epID: {current, previous}, other: {otherSecret, ""}}
	}
	check(false)

	// Each sweep reads a few items of the table (pages of 2 here): a pass
	// that found some is followed by another, which finds none and ends
	// the sealing. Twenty sweeps are more than the table needs.
	sealing := webhooks.NewSecretSealing(s, v)
	total := 0
	for range 20 {
		n, err := sealing.Sweep(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		total += n
	}
	if total != 3 {
		t.Fatalf("%d endpoints sealed, want 3", total)
	}
	noSecretInClear(t, db, consoleSecret, otherSecret, current, previous)
	check(true)
	if n, err := sealing.Sweep(ctx, now); err != nil || n != 0 {
		t.Fatalf("a sweep after the sealing sealed %d, %v", n, err)
	}
	got, err := s.Endpoint(ctx, co, epID)
	if err != nil || !got.CreatedAt.Equal(now.Add(-48*time.Hour)) || !got.PreviousExpiresAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("endpoint after its sealing %+v, %v", got, err)
	}

	// A write with a secret in clear is refused; an update of the sealed
	// endpoint keeps it sealed.
	clear := webhooks.Endpoint{ID: uuid.NewString(), CompanyID: co, URL: "https://x.example.com", Status: webhooks.EndpointEnabled, Secret: "whsec_clear"}
	if err := s.CreateEndpoint(ctx, clear, webhooks.MaxEndpoints); !errors.Is(err, store.ErrClearSecret) {
		t.Fatalf("create with a secret in clear: %v", err)
	}
	if _, err := s.UpdateEndpoint(ctx, co, epID, func(e *webhooks.Endpoint) error { e.Description = "sealed"; return nil }); err != nil {
		t.Fatal(err)
	}
	noSecretInClear(t, db, consoleSecret, otherSecret, current, previous, "whsec_clear")
}
