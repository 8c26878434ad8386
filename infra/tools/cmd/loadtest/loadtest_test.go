package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go/middleware"

	"payments/pkg/store/schema"
)

func TestResultAdd(t *testing.T) {
	var r Result
	r.Add(Result{Elapsed: time.Second, Accepted: 2, Latencies: []time.Duration{1, 2}, Refused: map[string]int{"409 CONFLICT": 1}})
	r.Add(Result{Elapsed: 2 * time.Second, Accepted: 1, Latencies: []time.Duration{3}, Refused: map[string]int{"409 CONFLICT": 2, "conflict": 1}})
	if r.Elapsed != 3*time.Second || r.Accepted != 3 || len(r.Latencies) != 3 || r.Refused["409 CONFLICT"] != 3 || r.Refused["conflict"] != 1 {
		t.Errorf("sum %+v", r)
	}
	if r.PerSecond() != 1 {
		t.Errorf("PerSecond = %v, want 1", r.PerSecond())
	}
}

func TestRatio(t *testing.T) {
	a := Result{Accepted: 300, Elapsed: 10 * time.Second}
	b := Result{Accepted: 600, Elapsed: 20 * time.Second}
	if got := Ratio(a, b); got != 1 {
		t.Errorf("Ratio = %v, want 1 (30/s over 30/s)", got)
	}
	if got := Ratio(a, Result{}); got != 0 {
		t.Errorf("Ratio over nothing = %v, want 0", got)
	}
}

func TestBulkRates(t *testing.T) {
	single := Result{Accepted: 1000, Elapsed: 10 * time.Second} // 100/s
	for _, c := range []struct {
		name      string
		d         time.Duration
		single    Result
		rate, got float64
	}{
		{"reservations", 2 * time.Second, single, 5000, 50},
		{"payouts written", 40 * time.Second, single, 250, 2.5},
		{"not reached", 0, single, 0, 0},
		{"no single figure", 2 * time.Second, Result{}, 5000, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := BulkResult{Items: 10000, Single: c.single}
			rate := b.Rate(c.d)
			if rate != c.rate {
				t.Errorf("Rate(%s) = %v, want %v", c.d, rate, c.rate)
			}
			if got := b.Times(rate); got != c.got {
				t.Errorf("Times(%v) = %v, want %v", rate, got, c.got)
			}
		})
	}
}

func TestWriteBulkTable(t *testing.T) {
	b := BulkResult{
		Items: 10000, Accepted: 2 * time.Second, Written: 80 * time.Second, Waited: 90 * time.Second,
		Single:  Result{Name: "(a) dev server, 1 wallet", Accepted: 1000, Elapsed: 10 * time.Second},
		Clients: 8,
		Last:    batchView{Status: "PROCESSING", Counts: map[string]int{"pending": 600, "processing": 9400}},
	}
	var out strings.Builder
	writeBulkTable(&out, b)
	for _, want := range []string{
		"| 202: all reserved (reservations) | 2.00 | 5000 | 100 | 50.0× |\n",
		"| all reserved as payouts (payouts written) | 80.00 | 125 | 100 | 1.2× |\n",
		"| COMPLETED (every item final) | not within 90 s | - | 100 | - |\n",
		"The batch after 90 s: PROCESSING; pending 600, processing 9400, success 0, failed 0.",
		"Target 202 <= 5 s: met (2.00 s).\n",
		"Target all reserved as payouts <= 60 s: NOT met (80.00 s).\n",
		"Target reservations/s >= 10× the single path: met (50.0×).\n",
		"Target payouts written/s >= 10× the single path: NOT met (1.2×).\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
}

func TestBulkBody(t *testing.T) {
	body, err := bulkBody(3, "t")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"phone_number":"237670000001"`, `"phone_number":"237670000021"`, `"external_id":"loadtest-t-00002"`, `"mode":"partial"`} {
		if !strings.Contains(string(body), want) {
			t.Errorf("body lacks %s: %s", want, body)
		}
	}
}

// put is a transaction item that writes a new item pk/sk.
func put(pk, sk string) types.TransactWriteItem {
	return types.TransactWriteItem{Put: &types.Put{TableName: aws.String("table"), Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk},
	}}}
}

// update is a transaction item that updates pk/sk.
func update(pk, sk string) types.TransactWriteItem {
	return types.TransactWriteItem{Update: &types.Update{TableName: aws.String("table"), Key: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: pk}, "SK": &types.AttributeValueMemberS{Value: sk},
	}, UpdateExpression: aws.String("SET n = n + :one")}}
}

// heldHandler stands for DynamoDB: it answers each call once release is
// closed (or at once when release is nil) and records the calls.
type heldHandler struct {
	entered chan *dynamodb.TransactWriteItemsInput
	release chan struct{}
}

func (h heldHandler) HandleInitialize(ctx context.Context, in middleware.InitializeInput) (middleware.InitializeOutput, middleware.Metadata, error) {
	h.entered <- in.Parameters.(*dynamodb.TransactWriteItemsInput)
	if h.release != nil {
		<-h.release
	}
	return middleware.InitializeOutput{Result: &dynamodb.TransactWriteItemsOutput{}}, middleware.Metadata{}, nil
}

func TestConflictSimulation(t *testing.T) {
	sim := NewConflictSimulation()
	h := heldHandler{entered: make(chan *dynamodb.TransactWriteItemsInput, 10), release: make(chan struct{})}
	call := func(items ...types.TransactWriteItem) error {
		_, _, err := sim.handle(context.Background(), middleware.InitializeInput{
			Parameters: &dynamodb.TransactWriteItemsInput{TransactItems: items},
		}, h)
		return err
	}
	first := make(chan error, 1)
	go func() { first <- call(put("C#1", schema.PaymentSK("1")), update("C#1", schema.WalletSK("w"))) }()
	<-h.entered // the first transaction is in flight

	// Another transaction on the same wallet is cancelled, the wallet's
	// reason being TransactionConflict and the other's None.
	err := call(put("C#1", schema.PaymentSK("2")), update("C#1", schema.WalletSK("w")))
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) || len(tce.CancellationReasons) != 2 ||
		aws.ToString(tce.CancellationReasons[0].Code) != "None" ||
		aws.ToString(tce.CancellationReasons[1].Code) != "TransactionConflict" {
		t.Fatalf("second transaction on the wallet: %v, want cancelled [None TransactionConflict]", err)
	}
	if !conflicted(err) {
		t.Error("conflicted does not recognise the simulated cancellation")
	}

	// One on other items goes through.
	other := make(chan error, 1)
	go func() { other <- call(put("C#1", schema.PaymentSK("3")), update("C#1", schema.WalletSK("v"))) }()
	<-h.entered
	close(h.release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	if err := <-other; err != nil {
		t.Fatal(err)
	}
	// Once the first is answered, the wallet is free again.
	if err := call(update("C#1", schema.WalletSK("w"))); err != nil {
		t.Fatalf("after the first transaction: %v", err)
	}
	if a, c := sim.Attempts.Load(), sim.Conflicts.Load(); a != 4 || c != 1 {
		t.Errorf("attempts %d, conflicts %d, want 4 and 1", a, c)
	}
}

func TestSubItemsRewrite(t *testing.T) {
	tx := &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		put(schema.CompanyPK("c"), schema.PaymentSK("p")), update(schema.CompanyPK("c"), schema.WalletSK("w")), update(schema.CompanyPK("c"), schema.LedgerSK("e")),
	}}
	got := SubItems{N: 4}.rewrite(tx, 3)
	if sk := attrString(got.TransactItems[1].Update.Key["SK"]); sk != "WALLETSUB#w#03" {
		t.Errorf("wallet update moved to %q, want WALLETSUB#w#03", sk)
	}
	if pk := attrString(got.TransactItems[1].Update.Key["PK"]); pk != schema.CompanyPK("c") {
		t.Errorf("sub-item in partition %q, want %s", pk, schema.CompanyPK("c"))
	}
	if sk := attrString(got.TransactItems[2].Update.Key["SK"]); sk != schema.LedgerSK("e") {
		t.Errorf("another update moved to %q", sk)
	}
	if sk := attrString(tx.TransactItems[1].Update.Key["SK"]); sk != schema.WalletSK("w") {
		t.Errorf("the input was changed: %q", sk)
	}
}

func TestSubItemsSticky(t *testing.T) {
	s := SubItems{N: 8, Sticky: true}
	stack := middleware.NewStack("test", nil)
	if err := s.Register(stack); err != nil {
		t.Fatal(err)
	}
	mw, _ := stack.Initialize.Get("walletSubItems")
	h := heldHandler{entered: make(chan *dynamodb.TransactWriteItemsInput, 1)}
	ctx := WithClient(context.Background())
	sk := func() string {
		_, _, err := mw.HandleInitialize(ctx, middleware.InitializeInput{Parameters: &dynamodb.TransactWriteItemsInput{
			TransactItems: []types.TransactWriteItem{update(schema.CompanyPK("c"), schema.WalletSK("w"))},
		}}, h)
		if err != nil {
			t.Fatal(err)
		}
		return attrString((<-h.entered).TransactItems[0].Update.Key["SK"])
	}
	first := sk()
	for range 20 {
		if got := sk(); got != first {
			t.Fatalf("a sticky client moved from %s to %s without a conflict", first, got)
		}
	}
}

func TestItemSize(t *testing.T) {
	for _, c := range []struct {
		name string
		item map[string]types.AttributeValue
		want int
	}{
		{"string", map[string]types.AttributeValue{"PK": &types.AttributeValueMemberS{Value: schema.CompanyPK("1")}}, 2 + 9},
		{"number", map[string]types.AttributeValue{"n": &types.AttributeValueMemberN{Value: "1000"}}, 1 + 3},
		{"bool", map[string]types.AttributeValue{"is_active": &types.AttributeValueMemberBOOL{Value: true}}, 9 + 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := ItemSize(c.item); got != c.want {
				t.Errorf("ItemSize = %d, want %d", got, c.want)
			}
		})
	}
	for size, want := range map[int]int{0: 2, 700: 2, 1024: 2, 1025: 4, 3000: 6} {
		if got := TransactWriteUnits(size); got != want {
			t.Errorf("TransactWriteUnits(%d) = %d, want %d", size, got, want)
		}
	}
}
