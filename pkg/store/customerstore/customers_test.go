package customerstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/google/uuid"

	"payments/pkg/customers"
	"payments/pkg/events"
	"payments/pkg/ids"
	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/customerstore"
	"payments/pkg/store/schema"
	"payments/pkg/store/storetest"
	"payments/pkg/timestamp"
)

// customerBase is when the customers of these tests are created: the n-th
// one n seconds after it.
var customerBase = time.Date(2026, 3, 1, 9, 30, 0, 123_000_000, time.UTC)

// newCustomer returns the n-th customer of company: every field set, a
// document fetched from a URL and an uploaded one, VERIFIED with a
// cardholder, created n seconds after customerBase (its id made then).
func newCustomer(companyID string, n int) customers.Customer {
	at := customerBase.Add(time.Duration(n) * time.Second)
	id := ids.NewV7(at)
	prefix := "companies/" + companyID + "/customers/" + id + "/id_document_"
	return customers.Customer{
		ID: id, CompanyID: companyID, FirstName: "Amina", LastName: fmt.Sprintf("Njoya %d", n),
		Email: fmt.Sprintf("amina.%d@example.com", n), Country: "Cameroon", Street: "12 Rue de la Joie",
		City: "Douala", State: "Littoral", PostalCode: "00237", CountryISOCode: "CM",
		PhoneCountryCode: "+237", PhoneNumber: fmt.Sprintf("6700%05d", n),
		IdentificationNumber: fmt.Sprintf("CM-%04d", n), DocumentType: customers.NIN,
		DateOfBirth: time.Date(2000, 2, 29, 0, 0, 0, 0, time.UTC),
		Front:       customers.Document{Key: prefix + "front", ContentType: "image/png", Size: 1234, Source: "https://docs.example.com/front.png"},
		Back:        customers.Document{Key: prefix + "back", ContentType: "application/pdf", Size: 5678},
		KYCStatus:   "VERIFIED", KYCID: "kyc_" + uuid.NewString(), CardholderID: "ch_" + uuid.NewString(),
		IsActive: true, CreatedAt: at, UpdatedAt: at,
	}
}

// createdEvent returns the customer.created event of c, made when c was.
func createdEvent(t *testing.T, c customers.Customer) events.Event {
	t.Helper()
	ev, err := events.Build(c.CompanyID, events.CustomerCreatedData{
		CustomerID: c.ID, FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Country: c.Country,
		PhoneCountryCode: c.PhoneCountryCode, PhoneNumber: c.PhoneNumber, KYCStatus: string(c.KYCStatus),
		IsActive: c.IsActive, CreatedAt: timestamp.Format(c.CreatedAt),
	}, c.CreatedAt)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// mustCreate stores c with its event, failing t on an error.
func mustCreate(t *testing.T, s *customerstore.Customers, c customers.Customer) {
	t.Helper()
	if err := s.Create(context.Background(), c, createdEvent(t, c)); err != nil {
		t.Fatalf("Create %s: %v", c.Email, err)
	}
}

// partitionSize counts the items of the company's partition, strongly
// consistent: whatever a write stored there.
func partitionSize(t *testing.T, db *store.DB, companyID string) int {
	t.Helper()
	n := 0
	p := dynamodb.NewQueryPaginator(db.Client, &dynamodb.QueryInput{
		TableName:                 aws.String(db.Table),
		KeyConditionExpression:    aws.String("PK = :pk"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":pk": &types.AttributeValueMemberS{Value: schema.CompanyPK(companyID)}},
		Select:                    types.SelectCount,
		ConsistentRead:            aws.Bool(true),
	})
	for p.HasMorePages() {
		out, err := p.NextPage(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n += int(out.Count)
	}
	return n
}

func TestCustomersCreateAndGet(t *testing.T) {
	db := storetest.NewDB(t)
	s := customerstore.NewCustomers(db)
	ctx := context.Background()
	company := uuid.NewString()

	rejected := newCustomer(company, 2)
	rejected.KYCStatus, rejected.KYCReason, rejected.CardholderID = "REJECTED", "document does not match the identity", ""
	rejected.IsActive = false
	rejected.DocumentType = customers.DriversLicense
	rejected.Front.Source = ""
	rejected.FirstName, rejected.City = "李小龙", "Ngaoundéré"
	rejected.UpdatedAt = rejected.CreatedAt.Add(90 * time.Minute)
	tests := []struct {
		name string
		c    customers.Customer
	}{
		{"verified, a document from a URL", newCustomer(company, 1)},
		{"rejected, inactive, no cardholder, uploads, non-ASCII", rejected},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := createdEvent(t, tt.c)
			if err := s.Create(ctx, tt.c, ev); err != nil {
				t.Fatalf("Create: %v", err)
			}
			got, err := s.Get(ctx, company, tt.c.ID)
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if got != tt.c {
				t.Fatalf("Get = %+v\nwant %+v", got, tt.c)
			}
			stored, err := store.NewOutbox(db).Event(ctx, company, ev.ID)
			want, _ := ev.WithSequence(1) // the customer's first event
			if err != nil || stored.Kind != events.CustomerCreated || string(stored.Body) != string(want.Body) ||
				stored.Object != tt.c.ID || stored.Sequence != 1 {
				t.Fatalf("event = %+v, %v; want %s", stored, err, want.Body)
			}
		})
	}

	t.Run("another company's customer is not found", func(t *testing.T) {
		for _, tt := range []struct{ name, company, id string }{
			{"other company", uuid.NewString(), tests[0].c.ID},
			{"unknown id", company, ids.NewV7(customerBase)},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if c, err := s.Get(ctx, tt.company, tt.id); !errors.Is(err, customers.ErrNotFound) {
					t.Fatalf("Get = %+v, %v; want ErrNotFound", c, err)
				}
			})
		}
	})
}

// TestCustomersUniqueness: an email and an identification number are each
// one customer's in a company, whatever their case; a refused Create
// writes nothing, and another company may have both.
func TestCustomersUniqueness(t *testing.T) {
	db := storetest.NewDB(t)
	s := customerstore.NewCustomers(db)
	ob := store.NewOutbox(db)
	ctx := context.Background()
	company := uuid.NewString()
	first := newCustomer(company, 1)
	first.Email, first.IdentificationNumber = "Amina@Example.com", "ab-123"
	mustCreate(t, s, first)

	t.Run("Taken", func(t *testing.T) {
		tests := []struct {
			name, company, email, idNumber string
			want                           bool
		}{
			{"same email and id", company, "Amina@Example.com", "ab-123", true},
			{"email in another case", company, "AMINA@example.COM", "new-1", true},
			{"id number in another case", company, "new@example.com", "AB-123", true},
			{"both new", company, "new@example.com", "new-1", false},
			{"another company", uuid.NewString(), "amina@example.com", "AB-123", false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				if got, err := s.Taken(ctx, tt.company, tt.email, tt.idNumber); err != nil || got != tt.want {
					t.Fatalf("Taken = %v, %v; want %v", got, err, tt.want)
				}
			})
		}
	})

	t.Run("Create", func(t *testing.T) {
		tests := []struct {
			name            string
			company         string
			email, idNumber string
			want            error
		}{
			{"email in another case", company, "amina@EXAMPLE.com", "new-1", customers.ErrDuplicate},
			{"id number in another case", company, "new@example.com", "AB-123", customers.ErrDuplicate},
			{"both taken", company, "AMINA@EXAMPLE.COM", "Ab-123", customers.ErrDuplicate},
			{"same email and id in another company", uuid.NewString(), "Amina@Example.com", "ab-123", nil},
			{"both new", company, "new@example.com", "new-1", nil},
		}
		for i, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				c := newCustomer(tt.company, 10+i)
				c.Email, c.IdentificationNumber = tt.email, tt.idNumber
				ev := createdEvent(t, c)
				before := partitionSize(t, db, tt.company)
				err := s.Create(ctx, c, ev)
				if !errors.Is(err, tt.want) {
					t.Fatalf("Create = %v, want %v", err, tt.want)
				}
				_, getErr := s.Get(ctx, tt.company, c.ID)
				_, evErr := ob.Event(ctx, tt.company, ev.ID)
				after := partitionSize(t, db, tt.company)
				if tt.want != nil {
					if !errors.Is(getErr, customers.ErrNotFound) || !errors.Is(evErr, events.ErrNotFound) || after != before {
						t.Fatalf("a refused Create wrote: customer %v, event %v, %d items then %d", getErr, evErr, before, after)
					}
					return
				}
				// The customer, its two claims, its event and the counter of its events.
				if getErr != nil || evErr != nil || after != before+5 {
					t.Fatalf("Create wrote: customer %v, event %v, %d items then %d", getErr, evErr, before, after)
				}
			})
		}
	})

	t.Run("concurrent creates sharing an email make one customer", func(t *testing.T) {
		company := uuid.NewString()
		errs := make([]error, 10)
		var wg sync.WaitGroup
		for i := range errs {
			c := newCustomer(company, i)
			c.Email = "Shared@Example.com"
			ev := createdEvent(t, c)
			wg.Go(func() { errs[i] = s.Create(ctx, c, ev) })
		}
		wg.Wait()
		created, duplicates := 0, 0
		for _, err := range errs {
			switch {
			case err == nil:
				created++
			case errors.Is(err, customers.ErrDuplicate):
				duplicates++
			default:
				t.Errorf("Create: %v", err)
			}
		}
		res, err := s.List(ctx, company, page.Request{Page: 1, Limit: 20})
		if created != 1 || duplicates != 9 || err != nil || res.Total != 1 || len(res.Items) != 1 {
			t.Fatalf("%d created, %d duplicates; listed %d of %d (%v); want 1 and 9", created, duplicates, len(res.Items), res.Total, err)
		}
		if n := partitionSize(t, db, company); n != 5 {
			t.Fatalf("%d items in the partition, want 5: one customer, its claims, its event and the counter of its events", n)
		}
	})
}

// TestCustomersList: a company's customers, newest first, by page number
// and by cursor, counted, and never another company's or an item that is
// not a customer (claims and events share the partition).
func TestCustomersList(t *testing.T) {
	db := storetest.NewDB(t)
	s := customerstore.NewCustomers(db)
	ctx := context.Background()
	company, other := uuid.NewString(), uuid.NewString()
	var newestFirst []string
	for n := range 12 {
		c := newCustomer(company, n)
		mustCreate(t, s, c)
		newestFirst = append([]string{c.ID}, newestFirst...)
	}
	var others []string
	for n := range 3 {
		c := newCustomer(other, 100+n)
		mustCreate(t, s, c)
		others = append([]string{c.ID}, others...)
	}
	idsOf := func(cs []customers.Customer) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.ID
		}
		return out
	}

	t.Run("by page number", func(t *testing.T) {
		tests := []struct {
			name        string
			company     string
			page, limit int
			want        []string
			total       int
			more        bool
		}{
			{"first", company, 1, 5, newestFirst[:5], 12, true},
			{"second", company, 2, 5, newestFirst[5:10], 12, true},
			{"last", company, 3, 5, newestFirst[10:], 12, false},
			{"past the last", company, 4, 5, nil, 12, false},
			{"all in one", company, 1, 12, newestFirst, 12, false},
			{"limit over the total", company, 1, 100, newestFirst, 12, false},
			{"the other company", other, 1, 10, others, 3, false},
			{"a company without customers", uuid.NewString(), 1, 10, nil, 0, false},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				res, err := s.List(ctx, tt.company, page.Request{Page: tt.page, Limit: tt.limit})
				if err != nil {
					t.Fatal(err)
				}
				got := idsOf(res.Items)
				if !slices.Equal(got, tt.want) || res.Total != tt.total || (res.Next != "") != tt.more {
					t.Fatalf("List = %v, total %d, next %q; want %v, total %d, more %v", got, res.Total, res.Next, tt.want, tt.total, tt.more)
				}
				if tt.more && res.Next != got[len(got)-1] {
					t.Fatalf("next %q is not the page's last customer %s", res.Next, got[len(got)-1])
				}
				for _, c := range res.Items {
					if c.CompanyID != tt.company {
						t.Fatalf("listed %s of company %s", c.ID, c.CompanyID)
					}
				}
			})
		}
	})

	t.Run("by cursor", func(t *testing.T) {
		for _, limit := range []int{1, 5, 12} {
			t.Run(fmt.Sprintf("limit %d", limit), func(t *testing.T) {
				var got []string
				pages := 0
				for p := (page.Request{Page: 1, Limit: limit}); ; {
					res, err := s.List(ctx, company, p)
					if err != nil {
						t.Fatal(err)
					}
					pages++
					if res.Total != 12 || len(res.Items) > limit {
						t.Fatalf("page %d: %d items, total %d", p.Page, len(res.Items), res.Total)
					}
					got = append(got, idsOf(res.Items)...)
					if res.Next == "" {
						break
					}
					p = p.Following(res.Next, res.Total)
				}
				if !slices.Equal(got, newestFirst) || pages != (12+limit-1)/limit {
					t.Fatalf("walked %d pages: %v, want %v", pages, got, newestFirst)
				}
			})
		}
	})

	t.Run("a cursor of another company's customer", func(t *testing.T) {
		p := page.Request{Page: 1, Limit: 5}.Following(others[0], 12)
		res, err := s.List(ctx, company, p)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range res.Items {
			if c.CompanyID != company {
				t.Fatalf("listed %s of company %s", c.ID, c.CompanyID)
			}
		}
	})
}

// TestCustomersSet: SetCardholder and SetActive change one attribute and
// updated_at, and refuse a customer that is not the company's.
func TestCustomersSet(t *testing.T) {
	db := storetest.NewDB(t)
	s := customerstore.NewCustomers(db)
	ctx := context.Background()
	company := uuid.NewString()
	later := customerBase.Add(48 * time.Hour)
	tests := []struct {
		name    string
		set     func(companyID, id string, now time.Time) error
		apply   func(*customers.Customer)
		touches bool // whether updated_at moves
	}{
		{"SetCardholder", func(companyID, id string, now time.Time) error {
			return s.SetCardholder(ctx, companyID, id, "ch_new")
		}, func(c *customers.Customer) { c.CardholderID = "ch_new" }, false},
		{"SetActive false", func(companyID, id string, now time.Time) error {
			return s.SetActive(ctx, companyID, id, false, now)
		}, func(c *customers.Customer) { c.IsActive = false }, true},
		{"SetActive true", func(companyID, id string, now time.Time) error {
			return s.SetActive(ctx, companyID, id, true, now)
		}, func(c *customers.Customer) { c.IsActive = true }, true},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newCustomer(company, i)
			c.CardholderID, c.IsActive = "", i != 2
			mustCreate(t, s, c)
			if err := tt.set(company, c.ID, later); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			want := c
			tt.apply(&want)
			if tt.touches {
				want.UpdatedAt = later
			}
			got, err := s.Get(ctx, company, c.ID)
			if err != nil || got != want {
				t.Fatalf("Get = %+v, %v\nwant %+v", got, err, want)
			}

			other := uuid.NewString()
			for _, miss := range []struct{ name, company, id string }{
				{"unknown customer", company, ids.NewV7(later)},
				{"another company's customer", other, c.ID},
			} {
				if err := tt.set(miss.company, miss.id, later); !errors.Is(err, customers.ErrNotFound) {
					t.Fatalf("%s of %s = %v, want ErrNotFound", tt.name, miss.name, err)
				}
				if _, err := s.Get(ctx, miss.company, miss.id); !errors.Is(err, customers.ErrNotFound) {
					t.Fatalf("%s of %s stored something: %v", tt.name, miss.name, err)
				}
			}
			if n := partitionSize(t, db, other); n != 0 {
				t.Fatalf("%d items written in another company's partition", n)
			}
		})
	}
}
