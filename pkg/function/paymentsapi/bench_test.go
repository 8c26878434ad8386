package paymentsapi_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/app/apptest"
	"payments/pkg/companies"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/function/paymentsapi"
	"payments/pkg/function/tokenkeys"
	"payments/pkg/ids"
	"payments/pkg/store"
	"payments/pkg/store/moneystore"
	"payments/pkg/store/schema"
	"payments/pkg/wallets"
)

// memoryAWS answers the DynamoDB and SQS calls of the payments function in
// memory, at the HTTP level, so that a benchmark measures our code and the
// SDK's (signing, encoding, decoding) without a network or an emulator. It
// keeps the items that PutItem and the Puts of TransactWriteItems write
// until frozen (after the set-up, so that every request sees the same
// state); GetItem reads them by key; Query returns the items of the partition
// named by one of its values whose sort key starts with another (enough
// for the queries of the payout path); UpdateItem and the other items of a
// transaction succeed without effect, conditions unchecked. SendMessage
// answers a message id and the body's MD5, which the SDK checks.
type memoryAWS struct {
	mu     sync.Mutex
	frozen bool
	items  map[string]map[string]json.RawMessage // PK + "\x00" + SK → item
}

func newMemoryAWS() *memoryAWS {
	return &memoryAWS{items: map[string]map[string]json.RawMessage{}}
}

// attr is an attribute value on the wire, as far as keys need.
type attr struct {
	S string `json:"S"`
}

func itemKeyOf(item map[string]json.RawMessage) string {
	var pk, sk attr
	json.Unmarshal(item["PK"], &pk)
	json.Unmarshal(item["SK"], &sk)
	return pk.S + "\x00" + sk.S
}

func (m *memoryAWS) RoundTrip(r *http.Request) (*http.Response, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, err
	}
	r.Body.Close()
	target := r.Header.Get("X-Amz-Target")
	_, op, _ := strings.Cut(target, ".")
	var out any = struct{}{}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch op {
	case "PutItem":
		var in struct{ Item map[string]json.RawMessage }
		json.Unmarshal(body, &in)
		if !m.frozen {
			m.items[itemKeyOf(in.Item)] = in.Item
		}
	case "TransactWriteItems":
		var in struct {
			TransactItems []struct {
				Put *struct{ Item map[string]json.RawMessage }
			}
		}
		json.Unmarshal(body, &in)
		for _, it := range in.TransactItems {
			if it.Put != nil && !m.frozen {
				m.items[itemKeyOf(it.Put.Item)] = it.Put.Item
			}
		}
	case "GetItem":
		var in struct{ Key map[string]json.RawMessage }
		json.Unmarshal(body, &in)
		if item, ok := m.items[itemKeyOf(in.Key)]; ok {
			out = map[string]any{"Item": item}
		}
	case "Query":
		var in struct{ ExpressionAttributeValues map[string]attr }
		json.Unmarshal(body, &in)
		var found []map[string]json.RawMessage
		for key, item := range m.items {
			pk, sk, _ := strings.Cut(key, "\x00")
			var isPK, isPrefix bool
			for _, v := range in.ExpressionAttributeValues {
				isPK = isPK || v.S == pk
				isPrefix = isPrefix || (v.S != pk && v.S != "" && strings.HasPrefix(sk, v.S))
			}
			if isPK && isPrefix {
				found = append(found, item)
			}
		}
		out = map[string]any{"Items": found, "Count": len(found), "ScannedCount": len(found)}
	case "UpdateItem":
	case "SendMessage":
		var in struct{ MessageBody string }
		json.Unmarshal(body, &in)
		sum := md5.Sum([]byte(in.MessageBody))
		out = map[string]string{"MessageId": "00000000-0000-4000-8000-000000000000", "MD5OfMessageBody": hex.EncodeToString(sum[:])}
	default:
		return nil, &unexpectedCall{target}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, err
	}
	return &http.Response{
		StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {"application/x-amz-json-1.0"}, "X-Amzn-Requestid": {"bench"}},
		Body:          io.NopCloser(bytes.NewReader(b)),
		ContentLength: int64(len(b)),
		Request:       r,
	}, nil
}

type unexpectedCall struct{ target string }

func (e *unexpectedCall) Error() string { return "memoryAWS: no answer for " + e.target }

// benchPayments builds the payments function over memoryAWS with one
// approved company and its funded XAF wallet in Cameroon, and returns its
// handler, an access token of the company, the company's id and the
// function's caches.
func benchPayments(b *testing.B) (function.HTTPHandler, string, string, base.Caches) {
	b.Helper()
	ctx := context.Background()
	mem := newMemoryAWS()
	cfg := function.Config{
		Mode: function.ModeSandbox, TableName: "bench", TokenKeys: apptest.AuthTestKeys,
		PayoutsQueueURL:  "https://sqs.eu-west-1.amazonaws.com/000000000000/payouts",
		WebhooksQueueURL: "https://sqs.eu-west-1.amazonaws.com/000000000000/webhooks",
		CompanyLimits:    apptest.GenerousLimits,
		AWS: aws.Config{
			Region:      "eu-west-1",
			Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
			HTTPClient:  &http.Client{Transport: mem},
		},
	}
	db := store.New(store.NewClient(cfg.AWS, ""), cfg.TableName)
	created, err := companies.NewService(store.NewCompanies(db), nil).Create(ctx, "Bench Ltd", companies.KYBApproved)
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now().UTC()
	if err := moneystore.NewWallets(db).CreateWallet(ctx, wallets.Wallet{
		ID: ids.NewV7(now), CompanyID: created.ID, Currency: "XAF", Country: "Cameroon", CountryISOCode: "CM",
		CountryPhoneCode: "+237", PayoutBalance: 1 << 40, PayoutAvailable: 1 << 40, IsActive: true,
		CreatedAt: now, UpdatedAt: now,
	}); err != nil {
		b.Fatal(err)
	}
	caches := base.NewCaches(time.Now)
	svc, err := tokenkeys.Service(ctx, cfg, db, nil, caches.Companies)
	if err != nil {
		b.Fatal(err)
	}
	tok, err := svc.Issue(ctx, "127.0.0.1", created.ClientID, created.ClientKey)
	if err != nil {
		b.Fatal(err)
	}
	h, err := paymentsapi.NewWith(ctx, cfg, caches)
	if err != nil {
		b.Fatal(err)
	}
	mem.mu.Lock()
	mem.frozen = true
	mem.mu.Unlock()
	return h, tok.AccessToken, created.ID, caches
}

// gatewayEvent is the API Gateway (HTTP API, payload 2.0) event of a
// request to path with the token.
func gatewayEvent(method, path, token, body string) events.APIGatewayV2HTTPRequest {
	return events.APIGatewayV2HTTPRequest{
		Version: "2.0", RouteKey: method + " " + path, RawPath: path,
		Headers: map[string]string{"authorization": "Bearer " + token, "content-type": "application/json", "user-agent": "bench"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RequestID: "bench", Stage: "$default", DomainName: "api.example.com",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "192.0.2.1", UserAgent: "bench"},
		},
		Body: body,
	}
}

// benchHandler calls h with e b.N times, failing on another status than
// want; the functions' logs go to a JSON handler that discards them, as
// formatting them is part of the cost.
func benchHandler(b *testing.B, h function.HTTPHandler, e events.APIGatewayV2HTTPRequest, want int) {
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewJSONHandler(io.Discard, nil)))
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "bench"})
	if resp, err := h(ctx, e); err != nil || resp.StatusCode != want {
		b.Fatalf("%s: %d %s, %v; want %d", e.RouteKey, resp.StatusCode, resp.Body, err, want)
	}
	b.ReportAllocs()
	for b.Loop() {
		if resp, err := h(ctx, e); err != nil || resp.StatusCode != want {
			b.Fatalf("%s: %d %s, %v", e.RouteKey, resp.StatusCode, resp.Body, err)
		}
	}
}

// BenchmarkBalance is the warm cost of GET /payment/balance: the API
// Gateway event to the response, DynamoDB answered in memory.
func BenchmarkBalance(b *testing.B) {
	h, token, _, _ := benchPayments(b)
	benchHandler(b, h, gatewayEvent("GET", "/api/v1/payment/balance", token, ""), http.StatusOK)
}

// BenchmarkBalanceReadingTheCompany is BenchmarkBalance with the token
// guard reading the company from DynamoDB at every request (its cache
// forgotten each time): what checking the key version on every request
// would cost, against reading it once per cache.Staleness
// (docs/auth.md).
func BenchmarkBalanceReadingTheCompany(b *testing.B) {
	h, token, companyID, caches := benchPayments(b)
	e := gatewayEvent("GET", "/api/v1/payment/balance", token, "")
	defer slog.SetDefault(slog.Default())
	slog.SetDefault(slog.New(slog.NewJSONHandler(io.Discard, nil)))
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "bench"})
	b.ReportAllocs()
	for b.Loop() {
		caches.Companies.Forget(companyID)
		if resp, err := h(ctx, e); err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d %s, %v", e.RouteKey, resp.StatusCode, resp.Body, err)
		}
	}
}

// BenchmarkPayout is the warm cost of POST /payment/payout: the API
// Gateway event to the response, DynamoDB and SQS answered in memory.
func BenchmarkPayout(b *testing.B) {
	h, token, _, _ := benchPayments(b)
	body := `{"operator":"mtn","country":"CM","phone_number":"237670000001","amount":100,"currency":"XAF"}`
	benchHandler(b, h, gatewayEvent("POST", "/api/v1/payment/payout", token, body), http.StatusOK)
}

// BenchmarkSDKGetItem is one DynamoDB GetItem through the SDK client the
// functions use, answered by memoryAWS: the cost of a call, which the
// handlers above pay for each of theirs (docs/performance.md).
func BenchmarkSDKGetItem(b *testing.B) {
	cfg := aws.Config{
		Region:      "eu-west-1",
		Credentials: credentials.NewStaticCredentialsProvider("AKID", "SECRET", ""),
		HTTPClient:  &http.Client{Transport: newMemoryAWS()},
	}
	client := store.NewClient(cfg, "")
	in := &dynamodb.GetItemInput{TableName: aws.String("bench"), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK("1")}, "SK": &types.AttributeValueMemberS{Value: schema.CompanySK},
	}}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.GetItem(context.Background(), in); err != nil {
			b.Fatal(err)
		}
	}
}
