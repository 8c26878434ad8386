package e2e_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"payments/pkg/app/apptest"
	"payments/pkg/function/keyvaults"
	"payments/pkg/queue/queuetest"
	"payments/pkg/store/schema"
	"payments/pkg/vault/kmskeys"
	"payments/pkg/webhooks"
)

// clearSecrets fails the test when an item of the table has a secret or
// previous_secret attribute (a secret in clear, as stored before secrets
// were sealed) or holds one of secrets, in any attribute, as text or bytes.
func (e *hookEnv) clearSecrets(t *testing.T, secrets ...string) {
	t.Helper()
	p := dynamodb.NewScanPaginator(e.DB.Client, &dynamodb.ScanInput{TableName: aws.String(e.DB.Table)})
	n := 0
	for p.HasMorePages() {
		page, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range page.Items {
			n++
			for name, av := range item {
				if name == "secret" || name == "previous_secret" {
					t.Errorf("an item of the table has the attribute %s", name)
				}
				for _, s := range secrets {
					if holdsText(av, s) {
						t.Errorf("attribute %s of an item holds a secret the API returned", name)
					}
				}
			}
		}
	}
	if n == 0 {
		t.Fatal("the table is empty")
	}
}

// holdsText reports whether av, or a value inside it, holds s.
func holdsText(av types.AttributeValue, s string) bool {
	switch v := av.(type) {
	case *types.AttributeValueMemberS:
		return strings.Contains(v.Value, s)
	case *types.AttributeValueMemberB:
		return strings.Contains(string(v.Value), s)
	case *types.AttributeValueMemberSS:
		return strings.Contains(strings.Join(v.Value, "\x00"), s)
	case *types.AttributeValueMemberM:
		for _, x := range v.Value {
			if holdsText(x, s) {
				return true
			}
		}
	case *types.AttributeValueMemberL:
		for _, x := range v.Value {
			if holdsText(x, s) {
				return true
			}
		}
	}
	return false
}

// verifiesWith reports whether the one delivery to path verifies with
// secret.
func verifiesWith(t *testing.T, rcv *receiver, path, secret string) bool {
	t.Helper()
	got := rcv.requests(path)
	if len(got) != 1 {
		t.Fatalf("%d deliveries to %s, want 1", len(got), path)
	}
	return webhooks.Verify(got[0].header.Get(webhooks.SignatureHeader), got[0].body, secret, 0, time.Time{}) == nil
}

// TestWebhookSecretsStoredSealed: after endpoints are created and their
// secrets rotated (a company's endpoint through the API, the console's
// through the operator console and through the API), no attribute of the
// table holds any secret the answers returned, nor a secret in clear, and
// every delivery verifies with the secrets returned: the current one, and
// the previous one during its overlap.
func TestWebhookSecretsStoredSealed(t *testing.T) {
	rcv := newReceiver(t, map[string][]int{"/a": {200}, "/b": {200}, "/console": {200}, "/notify": {200}})
	e := newEndpointsEnv(t, rcv)
	a := e.createEndpoint(t, rcv.URL+"/a", "*")
	b := e.createEndpoint(t, rcv.URL+"/b", "*")
	console1 := e.setWebhook(t, rcv.URL+"/console", true)
	console2 := e.setWebhook(t, rcv.URL+"/console", true) // replaced, no overlap
	ans := e.send(t, e.token, "POST", "/webhooks/endpoints/"+a.ID+"/rotate-secret", `{"expire_previous_in_hours":2}`)
	a2 := ans.endpoint(t)
	if ans.status != http.StatusCreated || a2.Secret == a.Secret || !strings.HasPrefix(a2.Secret, webhooks.EndpointSecretPrefix) {
		t.Fatalf("rotate: %d %s", ans.status, ans.raw)
	}
	ans = e.send(t, e.token, "POST", "/webhooks/endpoints/"+e.company+"/rotate-secret", `{"expire_previous_in_hours":2}`)
	console3 := ans.endpoint(t)
	if ans.status != http.StatusCreated || len(console3.Secret) != 64 || console3.Secret == console2 {
		t.Fatalf("rotate the console's: %d %s", ans.status, ans.raw)
	}
	e.clearSecrets(t, a.Secret, a2.Secret, b.Secret, console1, console2, console3.Secret)

	e.poll(t)
	ev := e.emit(t, rcv.URL+"/notify")
	e.waitFor(t, ev.ID, 20*time.Second, "DELIVERED", func(le logEntry) bool { return le.Status == "DELIVERED" && len(le.Deliveries) == 4 })
	for _, c := range []struct {
		path, secret string
		verifies     bool
	}{
		{"/a", a2.Secret, true}, {"/a", a.Secret, true}, // the overlap
		{"/b", b.Secret, true},
		{"/console", console3.Secret, true}, {"/console", console2, true}, {"/console", console1, false},
		{"/notify", console3.Secret, true}, // signed with the console's secret
		{"/b", a.Secret, false},
	} {
		if got := verifiesWith(t, rcv, c.path, c.secret); got != c.verifies {
			t.Errorf("delivery to %s verifies with %.12s…: %v, want %v", c.path, c.secret, got, c.verifies)
		}
	}
	e.clearSecrets(t, a.Secret, a2.Secret, b.Secret, console1, console2, console3.Secret)
}

// TestSweeperSealsWebhookSecretsStoredInClear: the endpoint items a
// version of before wrote with their secrets in clear (a company's
// endpoint, the console's signing secret) still sign deliveries; the
// sweeper seals them (its webhook_secrets step), after which no secret
// attribute in clear remains, the secrets appear nowhere in the table, and
// deliveries still verify with them. Sweeping again changes nothing.
func TestSweeperSealsWebhookSecretsStoredInClear(t *testing.T) {
	rcv := newReceiver(t, map[string][]int{"/in": {200}, "/notify": {200}})
	e := newEndpointsEnv(t, rcv)
	const endpointSecret, consoleSecret = "whsec_written_in_clear_0123456789", "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	id := uuid.NewString()
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for _, item := range []map[string]types.AttributeValue{
		{
			"PK": str(schema.CompanyPK(e.company)), "SK": str(schema.WebhookEndpointSK(id)), "type": str(schema.KindWebhookEndpoint), "id": str(id),
			"company_id": str(e.company), "url": str(rcv.URL + "/in"), "status": str("enabled"),
			"enabled_events": &types.AttributeValueMemberL{Value: []types.AttributeValue{str("*")}},
			"secret":         str(endpointSecret), "version": &types.AttributeValueMemberN{Value: "1"}, "created_at": str(now), "updated_at": str(now),
		},
		{
			"PK": str(schema.CompanyPK(e.company)), "SK": str(schema.WebhookSecretSK), "type": str(schema.KindWebhookSecret), "company_id": str(e.company),
			"secret": str(consoleSecret), "created_at": str(now),
		},
	} {
		if _, err := e.DB.Client.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(e.DB.Table), Item: item}); err != nil {
			t.Fatal(err)
		}
	}
	e.poll(t)
	deliver := func(t *testing.T) {
		t.Helper()
		n := len(rcv.requests("/in"))
		ev := e.emit(t, rcv.URL+"/notify")
		e.waitFor(t, ev.ID, 20*time.Second, "DELIVERED", func(le logEntry) bool { return le.Status == "DELIVERED" })
		for path, secret := range map[string]string{"/in": endpointSecret, "/notify": consoleSecret} {
			got := rcv.requests(path)
			if len(got) != n+1 {
				t.Fatalf("%d deliveries to %s, want %d", len(got), path, n+1)
			}
			if err := webhooks.Verify(got[n].header.Get(webhooks.SignatureHeader), got[n].body, secret, 0, time.Time{}); err != nil {
				t.Fatalf("delivery to %s: %v", path, err)
			}
		}
	}
	deliver(t) // stored in clear, as before

	cfg := e.Cfg
	sqsClient := queuetest.Client(t)
	cfg.PayoutsQueueURL, cfg.BulkPayoutsQueueURL = queuetest.NewQueue(t, sqsClient, nil), queuetest.NewQueue(t, sqsClient, nil)
	cfg.IssuerEventsQueueURL, cfg.IssuerWebhookSecret = queuetest.NewQueue(t, sqsClient, nil), apptest.IssuerTestSecret
	sweep := apptest.MustSweeper(t, apptest.Recording(cfg, "sweeper"), time.Now)
	// The first sweep seals both and, having found some, starts another
	// pass; the second finds none: the sealing is over.
	for range 2 {
		if _, err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
			t.Fatal(err)
		}
	}
	e.clearSecrets(t, endpointSecret, consoleSecret)
	deliver(t) // sealed
	if _, err := sweep(context.Background(), events.EventBridgeEvent{}); err != nil {
		t.Fatal(err)
	}
	e.clearSecrets(t, endpointSecret, consoleSecret)
}

// openSecret returns the current secret of ep, as stored (sealed under
// the webhook key of the test's KMS stand-in), in clear.
func (e *hookEnv) openSecret(t *testing.T, ep webhooks.Endpoint) string {
	t.Helper()
	if ep.Secret != "" {
		t.Fatalf("endpoint %s read with its secret in clear", ep.ID)
	}
	v, err := keyvaults.Webhook(e.Cfg, kmskeys.FromConfig)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := webhooks.OpenSecrets(context.Background(), v, ep, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return opened.Secret
}

func str(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }
