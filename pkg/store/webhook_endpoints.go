package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/companies"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
	"payments/pkg/vault"
	"payments/pkg/webhooks"
)

// Webhook endpoints, in the company's partition:
//
//   - each endpoint the company created is an item WEBHOOK_ENDPOINT#<id>;
//     a counter item WEBHOOK_ENDPOINTS keeps their number under the limit;
//   - the console's endpoint (its id is the company id) is the company's
//     webhook_url, on the company item, with the rest (the secret, the
//     previous secret, the filter, the status) on the WEBHOOK_SECRET item
//     that has always held the company's signing secret: the console's
//     webhook of before is that endpoint as it stands, nothing moved.
//
// Every write of an endpoint item is conditioned on the version it read.
//
// Signing secrets are stored sealed (webhooks.SealSecrets), as maps of
// their vault.Sealed parts: sealed_secret and sealed_previous_secret. The
// items written before secrets were sealed hold them in clear (secret,
// previous_secret): such an item is still read, its secrets in clear on
// the endpoint, and every write of it writes them sealed, the one-off
// sealing of the sweeper (SealStoredSecrets) included. No write puts a
// secret in clear.

var _ webhooks.EndpointStore = (*Webhooks)(nil)

type endpointItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id,omitempty"`
	CompanyID string `dynamodbav:"company_id"`
	// URL is absent on the console's item: it is the company's
	// webhook_url.
	URL           string   `dynamodbav:"url,omitempty"`
	EnabledEvents []string `dynamodbav:"enabled_events,omitempty"`
	Description   string   `dynamodbav:"description,omitempty"`
	Status        string   `dynamodbav:"status,omitempty"`
	// SealedSecret and SealedPrevious are the secrets as written.
	SealedSecret   *vault.Sealed `dynamodbav:"sealed_secret,omitempty"`
	SealedPrevious *vault.Sealed `dynamodbav:"sealed_previous_secret,omitempty"`
	// Secret and PreviousSecret are the secrets in clear of an item
	// written before secrets were sealed: read, never written.
	Secret            string `dynamodbav:"secret,omitempty"`
	PreviousSecret    string `dynamodbav:"previous_secret,omitempty"`
	PreviousExpiresAt string `dynamodbav:"previous_expires_at,omitempty"`
	// Version counts the writes; the signing-secret items of before have
	// none (0).
	Version   int    `dynamodbav:"version"`
	CreatedAt string `dynamodbav:"created_at,omitempty"`
	UpdatedAt string `dynamodbav:"updated_at,omitempty"`
}

// ErrClearSecret reports an endpoint to be written with a secret in clear:
// webhooks.SealSecrets seals it first.
var ErrClearSecret = errors.New("store: webhook secret in clear")

// endpointItemOf returns the item of e at version, its secrets sealed;
// ErrClearSecret when e holds one in clear.
func endpointItemOf(e webhooks.Endpoint, version int) (endpointItem, error) {
	if e.Secret != "" || e.PreviousSecret != "" {
		return endpointItem{}, fmt.Errorf("%w: endpoint %s", ErrClearSecret, e.ID)
	}
	it := endpointItem{
		PK: schema.CompanyPK(e.CompanyID), SK: schema.WebhookEndpointSK(e.ID), Type: schema.KindWebhookEndpoint, ID: e.ID,
		CompanyID: e.CompanyID, URL: e.URL, EnabledEvents: e.EnabledEvents, Description: e.Description,
		Status: string(e.Status), SealedSecret: sealedOrNil(e.SealedSecret), SealedPrevious: sealedOrNil(e.SealedPrevious),
		Version: version, CreatedAt: timestamp.Format(e.CreatedAt), UpdatedAt: timestamp.Format(e.UpdatedAt),
	}
	if e.Console {
		it.SK, it.Type, it.URL = schema.WebhookSecretSK, schema.KindWebhookSecret, ""
	}
	if it.SealedPrevious != nil {
		it.PreviousExpiresAt = timestamp.Format(e.PreviousExpiresAt)
	}
	return it, nil
}

// sealedOrNil returns s as stored, nil when s is zero (none).
func sealedOrNil(s vault.Sealed) *vault.Sealed {
	if s.IsZero() {
		return nil
	}
	return &s
}

// sealedOf returns the secret s points to, zero for nil.
func sealedOf(s *vault.Sealed) vault.Sealed {
	if s == nil {
		return vault.Sealed{}
	}
	return *s
}

// consoleItem returns the console endpoint's item of a company that has
// none yet: the defaults (enabled, every kind, no secret).
func consoleItem(companyID string) endpointItem {
	return endpointItem{PK: schema.CompanyPK(companyID), SK: schema.WebhookSecretSK, CompanyID: companyID}
}

// endpoint returns the endpoint of it; c is the company, for the console's.
func (it endpointItem) endpoint(c companyItem) (webhooks.Endpoint, error) {
	e := webhooks.Endpoint{
		ID: it.ID, CompanyID: it.CompanyID, URL: it.URL, EnabledEvents: it.EnabledEvents, Description: it.Description,
		Status: webhooks.EndpointStatus(it.Status), Secret: it.Secret, PreviousSecret: it.PreviousSecret,
		SealedSecret: sealedOf(it.SealedSecret), SealedPrevious: sealedOf(it.SealedPrevious),
	}
	if it.SK == schema.WebhookSecretSK {
		e.ID, e.CompanyID, e.URL, e.Console = c.ID, c.ID, c.WebhookURL, true
		e.CreatedAt, e.UpdatedAt = c.CreatedAt, c.UpdatedAt
		if e.Status == "" {
			e.Status = webhooks.EndpointEnabled
		}
		if e.EnabledEvents == nil {
			e.EnabledEvents = []string{webhooks.AllEvents}
		}
	}
	for _, t := range []struct {
		text string
		to   *time.Time
	}{{it.CreatedAt, &e.CreatedAt}, {it.UpdatedAt, &e.UpdatedAt}, {it.PreviousExpiresAt, &e.PreviousExpiresAt}} {
		if t.text == "" {
			continue
		}
		at, err := timestamp.Parse(t.text)
		if err != nil {
			return webhooks.Endpoint{}, fmt.Errorf("store: webhook endpoint of %s: %w", it.CompanyID, err)
		}
		*t.to = at
	}
	return e, nil
}

// CreateEndpoint writes e, with the company's count of endpoints raised in
// the same transaction on the condition that it stays at most max;
// webhooks.ErrTooManyEndpoints otherwise.
func (s *Webhooks) CreateEndpoint(ctx context.Context, e webhooks.Endpoint, max int) error {
	it, err := endpointItemOf(e, 1)
	if err != nil {
		return err
	}
	item, err := attributevalue.MarshalMap(it)
	if err != nil {
		return fmt.Errorf("store: encode webhook endpoint: %w", err)
	}
	t := &Txn{}
	t.Add("count", types.TransactWriteItem{Update: &types.Update{
		TableName:                aws.String(s.db.Table),
		Key:                      dynamo.Key(schema.CompanyPK(e.CompanyID), schema.WebhookEndpointCountSK),
		UpdateExpression:         aws.String("SET #n = if_not_exists(#n, :zero) + :one, #type = :type"),
		ConditionExpression:      aws.String("attribute_not_exists(#n) OR #n < :max"),
		ExpressionAttributeNames: map[string]string{"#n": "endpoints", "#type": schema.AttrType},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":zero": dynamo.Num(0), ":one": dynamo.Num(1), ":max": dynamo.Num(int64(max)),
			":type": dynamo.Str(schema.KindWebhookEndpointCount),
		},
	}})
	t.Add("endpoint", types.TransactWriteItem{Put: &types.Put{
		TableName: aws.String(s.db.Table), Item: item, ConditionExpression: aws.String("attribute_not_exists(PK)"),
	}})
	return s.db.CommitOnce(ctx, "create webhook endpoint "+e.ID, t, func(_ context.Context, c dynamo.Cancellation) error {
		if c.Failed("count") {
			return webhooks.ErrTooManyEndpoints
		}
		return nil
	})
}

// Endpoint reads one endpoint; the company id names the console's, which
// exists while the company has a webhook_url.
func (s *Webhooks) Endpoint(ctx context.Context, companyID, id string) (webhooks.Endpoint, error) {
	e, _, err := s.readEndpoint(ctx, companyID, id)
	return e, err
}

// readEndpoint returns the endpoint and the version of its item.
func (s *Webhooks) readEndpoint(ctx context.Context, companyID, id string) (webhooks.Endpoint, int, error) {
	var c companyItem
	sk := schema.WebhookEndpointSK(id)
	if id == companyID {
		found, err := s.db.Find(ctx, schema.CompanyPK(companyID), schema.CompanySK, &c)
		if err != nil {
			return webhooks.Endpoint{}, 0, fmt.Errorf("store: read company %s: %w", companyID, err)
		}
		if !found || c.WebhookURL == "" {
			return webhooks.Endpoint{}, 0, webhooks.ErrEndpointNotFound
		}
		sk = schema.WebhookSecretSK
	}
	var it endpointItem
	found, err := s.db.Find(ctx, schema.CompanyPK(companyID), sk, &it)
	if err != nil {
		return webhooks.Endpoint{}, 0, fmt.Errorf("store: read webhook endpoint %s: %w", id, err)
	}
	if !found {
		if id != companyID {
			return webhooks.Endpoint{}, 0, webhooks.ErrEndpointNotFound
		}
		it = consoleItem(companyID)
	}
	e, err := it.endpoint(c)
	return e, it.Version, err
}

// Endpoints reads the company's endpoints in one strongly consistent query
// of its WEBHOOK_ items, and its company item: the console's first (when
// the company has a webhook_url or a signing secret: without a URL it
// only signs notify_url deliveries), then the others oldest first.
func (s *Webhooks) Endpoints(ctx context.Context, companyID string) ([]webhooks.Endpoint, error) {
	var c companyItem
	found, err := s.db.Find(ctx, schema.CompanyPK(companyID), schema.CompanySK, &c)
	if err != nil {
		return nil, fmt.Errorf("store: read company %s: %w", companyID, err)
	}
	if !found {
		return nil, nil
	}
	p := dynamodb.NewQueryPaginator(s.db.Client, &dynamodb.QueryInput{
		TableName:              aws.String(s.db.Table),
		KeyConditionExpression: aws.String("PK = :pk AND begins_with(SK, :sk)"),
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pk": dynamo.Str(schema.CompanyPK(companyID)), ":sk": dynamo.Str(schema.WebhookItemsPrefix),
		},
		ConsistentRead: aws.Bool(true),
	})
	var out []webhooks.Endpoint
	console, consoleFound := consoleItem(companyID), false
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("store: query webhook endpoints of %s: %w", companyID, err)
		}
		for _, item := range page.Items {
			var it endpointItem
			switch dynamo.StringAttr(item, schema.AttrType) {
			case schema.KindWebhookEndpoint, schema.KindWebhookSecret:
			default:
				continue
			}
			if err := attributevalue.UnmarshalMap(item, &it); err != nil {
				return nil, fmt.Errorf("store: decode webhook endpoint: %w", err)
			}
			if it.SK == schema.WebhookSecretSK {
				console, consoleFound = it, true
				continue
			}
			e, err := it.endpoint(c)
			if err != nil {
				return nil, err
			}
			out = append(out, e)
		}
	}
	if c.WebhookURL != "" || consoleFound {
		e, err := console.endpoint(c)
		if err != nil {
			return nil, err
		}
		out = slices.Insert(out, 0, e)
	}
	return out, nil
}

// UpdateEndpoint reads the endpoint, applies change and writes it back on
// the condition that its version is still the one read; a lost race is
// tried again from a fresh read. The console's URL is written on the
// company item, in the same transaction.
func (s *Webhooks) UpdateEndpoint(ctx context.Context, companyID, id string, change func(*webhooks.Endpoint) error) (webhooks.Endpoint, error) {
	var out webhooks.Endpoint
	err := s.db.Commit(ctx, "update webhook endpoint "+id, func(ctx context.Context) (*Txn, error) {
		e, version, err := s.readEndpoint(ctx, companyID, id)
		if err != nil {
			return nil, err
		}
		url := e.URL
		if err := change(&e); err != nil {
			return nil, err
		}
		it, err := endpointItemOf(e, version+1)
		if err != nil {
			return nil, err
		}
		item, err := attributevalue.MarshalMap(it)
		if err != nil {
			return nil, fmt.Errorf("store: encode webhook endpoint: %w", err)
		}
		t := &Txn{}
		t.Add("endpoint", s.versionedPut(item, version))
		if e.Console {
			// The console's URL is the company's webhook_url: written
			// there when it changes, and either way on the condition that
			// the console did not change or clear it since it was read.
			key := dynamo.Key(schema.CompanyPK(companyID), schema.CompanySK)
			cond, read := aws.String("webhook_url = :read"), map[string]types.AttributeValue{":read": dynamo.Str(url)}
			if e.URL == url {
				t.Add(schema.CompanyItem, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
					TableName: aws.String(s.db.Table), Key: key, ConditionExpression: cond, ExpressionAttributeValues: read,
				}})
			} else {
				read[":u"] = dynamo.Str(e.URL)
				t.Add(schema.CompanyItem, types.TransactWriteItem{Update: &types.Update{
					TableName: aws.String(s.db.Table), Key: key, UpdateExpression: aws.String("SET webhook_url = :u"),
					ConditionExpression: cond, ExpressionAttributeValues: read,
				}})
			}
		}
		out = e
		return t, nil
	}, func(context.Context, dynamo.Cancellation) error {
		// The endpoint or the company's webhook_url changed since the
		// read: read again (a deleted endpoint then reads as not found).
		return dynamo.ErrRetry
	})
	return out, err
}

// versionedPut returns the put of an endpoint item read at version, on
// the condition that it is still at version: absent, or without one (the
// console's item as the signing secret of before left it), at 0.
func (s *Webhooks) versionedPut(item map[string]types.AttributeValue, version int) types.TransactWriteItem {
	put := &types.Put{TableName: aws.String(s.db.Table), Item: item, ConditionExpression: aws.String("attribute_not_exists(version)")}
	if version > 0 {
		put.ConditionExpression = aws.String("version = :v")
		put.ExpressionAttributeValues = map[string]types.AttributeValue{":v": &types.AttributeValueMemberN{Value: strconv.Itoa(version)}}
	}
	return types.TransactWriteItem{Put: put}
}

// DeleteEndpoint removes an endpoint and lowers the company's count. The
// console's is removed by clearing the company's webhook_url and the
// settings of its item; the company's signing secret stays, for the
// notify_url deliveries it signs and a webhook_url the console sets again.
func (s *Webhooks) DeleteEndpoint(ctx context.Context, companyID, id string) error {
	t := &Txn{}
	if id == companyID {
		t.Add("endpoint", types.TransactWriteItem{Update: &types.Update{
			TableName:           aws.String(s.db.Table),
			Key:                 dynamo.Key(schema.CompanyPK(companyID), schema.CompanySK),
			UpdateExpression:    aws.String("REMOVE webhook_url"),
			ConditionExpression: aws.String("attribute_exists(webhook_url)"),
		}})
		t.Add("settings", types.TransactWriteItem{Update: &types.Update{
			TableName: aws.String(s.db.Table),
			Key:       dynamo.Key(schema.CompanyPK(companyID), schema.WebhookSecretSK),
			UpdateExpression: aws.String("SET version = if_not_exists(version, :zero) + :one, #type = :type, company_id = :cid " +
				"REMOVE enabled_events, description, #status, previous_secret, sealed_previous_secret, previous_expires_at"),
			ExpressionAttributeNames: map[string]string{"#status": "status", "#type": schema.AttrType},
			ExpressionAttributeValues: map[string]types.AttributeValue{
				":zero": dynamo.Num(0), ":one": dynamo.Num(1), ":type": dynamo.Str(schema.KindWebhookSecret), ":cid": dynamo.Str(companyID),
			},
		}})
	} else {
		t.Add("endpoint", types.TransactWriteItem{Delete: &types.Delete{
			TableName:           aws.String(s.db.Table),
			Key:                 dynamo.Key(schema.CompanyPK(companyID), schema.WebhookEndpointSK(id)),
			ConditionExpression: aws.String("attribute_exists(PK)"),
		}})
		t.Add("count", types.TransactWriteItem{Update: &types.Update{
			TableName:                 aws.String(s.db.Table),
			Key:                       dynamo.Key(schema.CompanyPK(companyID), schema.WebhookEndpointCountSK),
			UpdateExpression:          aws.String("SET endpoints = endpoints - :one"),
			ConditionExpression:       aws.String("endpoints > :zero"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":one": dynamo.Num(1), ":zero": dynamo.Num(0)},
		}})
	}
	return s.db.CommitOnce(ctx, "delete webhook endpoint "+id, t, func(_ context.Context, c dynamo.Cancellation) error {
		if c.Failed("endpoint") {
			return webhooks.ErrEndpointNotFound
		}
		return nil
	})
}

// PutSecret sets the signing secret of the company's console endpoint,
// sealed, with no overlap, on the condition that the company exists
// (companies.ErrNotFound otherwise).
func (s *Webhooks) PutSecret(ctx context.Context, companyID string, secret vault.Sealed, now time.Time) error {
	return s.updateConsoleSecret(ctx, companyID, secret, now)
}

// DeleteSecret turns signing off for the console's endpoint, on the
// condition that the company exists (companies.ErrNotFound otherwise).
func (s *Webhooks) DeleteSecret(ctx context.Context, companyID string) error {
	return s.updateConsoleSecret(ctx, companyID, vault.Sealed{}, time.Now())
}

// updateConsoleSecret writes secret on the console's item, whether or not
// the company has a webhook_url, and drops any previous secret (and any
// secret in clear of before).
func (s *Webhooks) updateConsoleSecret(ctx context.Context, companyID string, secret vault.Sealed, now time.Time) error {
	return s.db.Commit(ctx, "webhook secret of "+companyID, func(ctx context.Context) (*Txn, error) {
		it := consoleItem(companyID)
		if _, err := s.db.Find(ctx, schema.CompanyPK(companyID), schema.WebhookSecretSK, &it); err != nil {
			return nil, fmt.Errorf("store: read webhook secret of %s: %w", companyID, err)
		}
		version := it.Version
		it.Type, it.Secret, it.PreviousSecret, it.PreviousExpiresAt = schema.KindWebhookSecret, "", "", ""
		it.SealedSecret, it.SealedPrevious = sealedOrNil(secret), nil
		it.Version, it.UpdatedAt = version+1, timestamp.Format(now)
		if !secret.IsZero() {
			it.CreatedAt = timestamp.Format(now)
		}
		item, err := attributevalue.MarshalMap(it)
		if err != nil {
			return nil, fmt.Errorf("store: encode webhook secret: %w", err)
		}
		t := &Txn{}
		t.Add(schema.CompanyItem, types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{
			TableName:           aws.String(s.db.Table),
			Key:                 dynamo.Key(schema.CompanyPK(companyID), schema.CompanySK),
			ConditionExpression: aws.String("attribute_exists(PK)"),
		}})
		t.Add("endpoint", s.versionedPut(item, version))
		return t, nil
	}, func(_ context.Context, c dynamo.Cancellation) error {
		if c.Failed(schema.CompanyItem) {
			return companies.ErrNotFound
		}
		return dynamo.ErrRetry
	})
}

// The scan for secrets in clear (ClearSecrets) keeps its state in one
// item (schema.ClearSecretsPK).
const (
	// clearSecretsPages is how many pages of the table one ClearSecrets
	// reads: a sweep's share of the scan.
	clearSecretsPages = 4
)

// clearSecretsPageSize is how many items a page of that scan reads at
// most (Limit): four pages, 2,000 items, a sweep (tests make it smaller).
var clearSecretsPageSize int32 = 500

// clearSecretsState is where the scan for secrets in clear stands.
type clearSecretsState struct {
	PK   string `dynamodbav:"PK"`
	SK   string `dynamodbav:"SK"`
	Type string `dynamodbav:"type"`
	// NextPK and NextSK are the key the scan goes on after; empty at the
	// start of a pass.
	NextPK string `dynamodbav:"next_pk,omitempty"`
	NextSK string `dynamodbav:"next_sk,omitempty"`
	// Found counts the items in clear found in the current pass.
	Found int `dynamodbav:"found"`
	// Done is set once a whole pass found none: nothing is left in clear.
	Done bool `dynamodbav:"done"`
}

// ClearSecrets returns the endpoint items holding a secret in clear in the
// next clearSecretsPages pages of a Scan of the table, from where the last
// call left it (kept on an item of its own). A pass that reached the end
// having found some starts again from the start (an item written in clear
// by a version of before during a deploy is found by the next pass); one
// that found none is the last: later calls read the state item only.
func (s *Webhooks) ClearSecrets(ctx context.Context) ([]webhooks.StoredInClear, error) {
	st := clearSecretsState{PK: schema.ClearSecretsPK, SK: schema.ClearSecretsSK, Type: schema.KindClearSecrets}
	if _, err := s.db.Find(ctx, schema.ClearSecretsPK, schema.ClearSecretsSK, &st); err != nil {
		return nil, fmt.Errorf("store: read the state of the webhook secrets' sealing: %w", err)
	}
	if st.Done {
		return nil, nil
	}
	in := &dynamodb.ScanInput{
		TableName:                aws.String(s.db.Table),
		Limit:                    aws.Int32(clearSecretsPageSize),
		FilterExpression:         aws.String("begins_with(SK, :prefix) AND (attribute_exists(secret) OR attribute_exists(previous_secret))"),
		ProjectionExpression:     aws.String("PK, SK, company_id, id, #type"),
		ExpressionAttributeNames: map[string]string{"#type": schema.AttrType},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":prefix": dynamo.Str(schema.WebhookItemsPrefix),
		},
	}
	if st.NextPK != "" {
		in.ExclusiveStartKey = dynamo.Key(st.NextPK, st.NextSK)
	}
	var out []webhooks.StoredInClear
	end := false
	for range clearSecretsPages {
		page, err := s.db.Client.Scan(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("store: scan for webhook secrets in clear: %w", err)
		}
		for _, item := range page.Items {
			sk, companyID := dynamo.StringAttr(item, schema.AttrSK), dynamo.StringAttr(item, "company_id")
			switch {
			case sk == schema.WebhookSecretSK:
				out = append(out, webhooks.StoredInClear{CompanyID: companyID, EndpointID: companyID, Console: true})
			case strings.HasPrefix(sk, schema.WebhookEndpointSK("")):
				out = append(out, webhooks.StoredInClear{CompanyID: companyID, EndpointID: dynamo.StringAttr(item, "id")})
			}
		}
		if in.ExclusiveStartKey = page.LastEvaluatedKey; len(page.LastEvaluatedKey) == 0 {
			end = true
			break
		}
	}
	st.Found += len(out)
	st.NextPK, st.NextSK = "", ""
	switch {
	case !end:
		st.NextPK, st.NextSK = dynamo.StringAttr(in.ExclusiveStartKey, schema.AttrPK), dynamo.StringAttr(in.ExclusiveStartKey, schema.AttrSK)
	case st.Found == 0:
		st.Done = true
	default:
		st.Found = 0 // another pass, to find none
	}
	item, err := attributevalue.MarshalMap(st)
	if err != nil {
		return nil, fmt.Errorf("store: encode the state of the webhook secrets' sealing: %w", err)
	}
	if err := s.db.Put(ctx, "webhook secrets' sealing state", &dynamodb.PutItemInput{TableName: aws.String(s.db.Table), Item: item}); err != nil {
		return nil, err
	}
	return out, nil
}

// RewriteEndpoint reads the endpoint item of ref (the console's whether or
// not the company has a webhook_url) and, when change reports a change,
// writes it back on the condition that its version is still the one read;
// a lost race is tried again from a fresh read. An item no longer there is
// left so.
func (s *Webhooks) RewriteEndpoint(ctx context.Context, ref webhooks.StoredInClear, change func(*webhooks.Endpoint) (bool, error)) error {
	sk := schema.WebhookEndpointSK(ref.EndpointID)
	if ref.Console {
		sk = schema.WebhookSecretSK
	}
	err := s.db.Commit(ctx, "rewrite webhook endpoint "+ref.EndpointID, func(ctx context.Context) (*Txn, error) {
		var it endpointItem
		found, err := s.db.Find(ctx, schema.CompanyPK(ref.CompanyID), sk, &it)
		if err != nil {
			return nil, fmt.Errorf("store: read webhook endpoint %s: %w", ref.EndpointID, err)
		}
		if !found {
			return nil, errNothingToRewrite
		}
		if it.CompanyID == "" {
			it.CompanyID = ref.CompanyID
		}
		e, err := it.endpoint(companyItem{ID: ref.CompanyID})
		if err != nil {
			return nil, err
		}
		changed, err := change(&e)
		if err != nil {
			return nil, err
		}
		if !changed {
			return nil, errNothingToRewrite
		}
		next, err := endpointItemOf(e, it.Version+1)
		if err != nil {
			return nil, err
		}
		next.CreatedAt, next.UpdatedAt = it.CreatedAt, it.UpdatedAt // sealing is not an update
		item, err := attributevalue.MarshalMap(next)
		if err != nil {
			return nil, fmt.Errorf("store: encode webhook endpoint: %w", err)
		}
		t := &Txn{}
		t.Add("endpoint", s.versionedPut(item, it.Version))
		return t, nil
	}, func(context.Context, dynamo.Cancellation) error { return dynamo.ErrRetry })
	if errors.Is(err, errNothingToRewrite) {
		return nil
	}
	return err
}

// errNothingToRewrite ends a RewriteEndpoint that has nothing to write.
var errNothingToRewrite = errors.New("store: nothing to rewrite")
