// Package customerstore is the DynamoDB implementation of the customers' store
// (customers.Store), on the table of package store (store.DB) with its
// toolkit: the customers, the claims that keep them unique, and the review
// queue of the operator console (customers_review.go). It moves no money.
package customerstore

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"payments/pkg/customers"
	"payments/pkg/events"
	"payments/pkg/page"
	"payments/pkg/store"
	"payments/pkg/store/dynamo"
	"payments/pkg/store/schema"
	"payments/pkg/timestamp"
)

var _ customers.Store = (*Customers)(nil)

// Customers stores a company's customers. In the company partition
// (COMPANY#<id>):
//
//   - CUSTOMER#<uuid v7>: the customer; ids are time-ordered, so the
//     partition lists them newest first by key;
//   - CUSTCLAIM#EMAIL#<sha-256> and CUSTCLAIM#IDNUMBER#<sha-256>: the claims
//     that keep an email and an identification number unique in the
//     company, keyed by the hash of the compared form (customers.EmailKey,
//     customers.IDNumberKey): a key of fixed length that does not show the
//     value (a hash, not a secret: the customer item holds the values).
//
// Outside it, CUSTREF#<id> maps a customer id to its company for the
// operator console (written with the customer; a customer enrolled before
// it existed has none, and the console does not find it), and a customer
// PENDING_REVIEW carries GSI1 keys in the KYC_REVIEW partition, the
// console's work queue (customers_review.go).
type Customers struct{ db *store.DB }

// NewCustomers returns the customers store on db.
func NewCustomers(db *store.DB) *Customers { return &Customers{db: db} }

type customerItem struct {
	PK                   string       `dynamodbav:"PK"`
	SK                   string       `dynamodbav:"SK"`
	GSI1PK               string       `dynamodbav:"GSI1PK,omitempty"`
	GSI1SK               string       `dynamodbav:"GSI1SK,omitempty"`
	Type                 string       `dynamodbav:"type"`
	ID                   string       `dynamodbav:"id"`
	CompanyID            string       `dynamodbav:"company_id"`
	FirstName            string       `dynamodbav:"first_name"`
	LastName             string       `dynamodbav:"last_name"`
	Email                string       `dynamodbav:"email"`
	Country              string       `dynamodbav:"country"`
	Street               string       `dynamodbav:"street"`
	City                 string       `dynamodbav:"city"`
	State                string       `dynamodbav:"state"`
	PostalCode           string       `dynamodbav:"postal_code"`
	CountryISOCode       string       `dynamodbav:"country_iso_code"`
	PhoneCountryCode     string       `dynamodbav:"phone_country_code"`
	PhoneNumber          string       `dynamodbav:"phone_number"`
	IdentificationNumber string       `dynamodbav:"identification_number"`
	DocumentType         string       `dynamodbav:"document_type"`
	DateOfBirth          string       `dynamodbav:"date_of_birth"`
	Front                documentAttr `dynamodbav:"document_front"`
	Back                 documentAttr `dynamodbav:"document_back"`
	KYCStatus            string       `dynamodbav:"kyc_status"`
	KYCReason            string       `dynamodbav:"kyc_reason,omitempty"`
	KYCID                string       `dynamodbav:"kyc_id,omitempty"`
	ReviewedBy           string       `dynamodbav:"kyc_reviewed_by,omitempty"`
	ReviewNote           string       `dynamodbav:"kyc_review_note,omitempty"`
	ReviewedAt           string       `dynamodbav:"kyc_reviewed_at,omitempty"`
	CardholderID         string       `dynamodbav:"cardholder_id,omitempty"`
	IsActive             bool         `dynamodbav:"is_active"`
	CreatedAt            string       `dynamodbav:"created_at"`
	UpdatedAt            string       `dynamodbav:"updated_at"`
}

type documentAttr struct {
	Key         string `dynamodbav:"key"`
	ContentType string `dynamodbav:"content_type"`
	Size        int64  `dynamodbav:"size"`
	Source      string `dynamodbav:"source,omitempty"`
	Reference   string `dynamodbav:"reference,omitempty"`
}

// customerRefItem maps a customer id to its company.
type customerRefItem struct {
	PK        string `dynamodbav:"PK"`
	SK        string `dynamodbav:"SK"`
	Type      string `dynamodbav:"type"`
	ID        string `dynamodbav:"id"`
	CompanyID string `dynamodbav:"company_id"`
}

type customerClaimItem struct {
	PK         string `dynamodbav:"PK"`
	SK         string `dynamodbav:"SK"`
	Type       string `dynamodbav:"type"`
	CustomerID string `dynamodbav:"customer_id"`
}

func newCustomerItem(c customers.Customer) customerItem {
	doc := func(d customers.Document) documentAttr {
		return documentAttr{Key: d.Key, ContentType: d.ContentType, Size: d.Size, Source: d.Source, Reference: d.Reference}
	}
	it := customerItem{
		PK: schema.CompanyPK(c.CompanyID), SK: schema.CustomerSK(c.ID), Type: schema.KindCustomer,
		ID: c.ID, CompanyID: c.CompanyID, FirstName: c.FirstName, LastName: c.LastName, Email: c.Email,
		Country: c.Country, Street: c.Street, City: c.City, State: c.State, PostalCode: c.PostalCode,
		CountryISOCode: c.CountryISOCode, PhoneCountryCode: c.PhoneCountryCode, PhoneNumber: c.PhoneNumber,
		IdentificationNumber: c.IdentificationNumber, DocumentType: string(c.DocumentType),
		DateOfBirth: c.DateOfBirth.Format(time.DateOnly), Front: doc(c.Front), Back: doc(c.Back),
		KYCStatus: string(c.KYCStatus), KYCReason: c.KYCReason, KYCID: c.KYCID, CardholderID: c.CardholderID,
		IsActive: c.IsActive, CreatedAt: timestamp.Format(c.CreatedAt), UpdatedAt: timestamp.Format(c.UpdatedAt),
	}
	if c.KYCStatus == customers.PendingReview {
		it.GSI1PK, it.GSI1SK = schema.KYCReviewGSI1PK, c.ID
	}
	if r := c.Review; r != nil {
		it.ReviewedBy, it.ReviewNote, it.ReviewedAt = r.By, r.Note, timestamp.Format(r.At)
	}
	return it
}

func (it customerItem) customer() (customers.Customer, error) {
	dob, err := time.Parse(time.DateOnly, it.DateOfBirth)
	if err != nil {
		return customers.Customer{}, fmt.Errorf("store: customer %s date_of_birth: %w", it.ID, err)
	}
	created, err := timestamp.Parse(it.CreatedAt)
	if err != nil {
		return customers.Customer{}, fmt.Errorf("store: customer %s created_at: %w", it.ID, err)
	}
	updated, err := timestamp.Parse(it.UpdatedAt)
	if err != nil {
		return customers.Customer{}, fmt.Errorf("store: customer %s updated_at: %w", it.ID, err)
	}
	doc := func(d documentAttr) customers.Document {
		return customers.Document{Key: d.Key, ContentType: d.ContentType, Size: d.Size, Source: d.Source, Reference: d.Reference}
	}
	var review *customers.ReviewRecord
	if it.ReviewedAt != "" {
		at, err := timestamp.Parse(it.ReviewedAt)
		if err != nil {
			return customers.Customer{}, fmt.Errorf("store: customer %s kyc_reviewed_at: %w", it.ID, err)
		}
		review = &customers.ReviewRecord{By: it.ReviewedBy, Note: it.ReviewNote, At: at}
	}
	return customers.Customer{
		Review: review,
		ID:     it.ID, CompanyID: it.CompanyID, FirstName: it.FirstName, LastName: it.LastName, Email: it.Email,
		Country: it.Country, Street: it.Street, City: it.City, State: it.State, PostalCode: it.PostalCode,
		CountryISOCode: it.CountryISOCode, PhoneCountryCode: it.PhoneCountryCode, PhoneNumber: it.PhoneNumber,
		IdentificationNumber: it.IdentificationNumber, DocumentType: customers.DocumentType(it.DocumentType),
		DateOfBirth: dob, Front: doc(it.Front), Back: doc(it.Back),
		KYCStatus: customers.KYCStatus(it.KYCStatus), KYCReason: it.KYCReason, KYCID: it.KYCID, CardholderID: it.CardholderID,
		IsActive: it.IsActive, CreatedAt: created, UpdatedAt: updated,
	}, nil
}

// claimKeys returns the sort keys of the claims of an email and an
// identification number.
func claimKeys(email, idNumber string) (string, string) {
	return schema.CustomerClaimSK("EMAIL", customers.EmailKey(email)), schema.CustomerClaimSK("IDNUMBER", customers.IDNumberKey(idNumber))
}

// Taken reads both claims, strongly consistent.
func (s *Customers) Taken(ctx context.Context, companyID, email, idNumber string) (bool, error) {
	emailSK, idSK := claimKeys(email, idNumber)
	for _, sk := range []string{emailSK, idSK} {
		var it customerClaimItem
		found, err := s.db.Find(ctx, schema.CompanyPK(companyID), sk, &it)
		if err != nil {
			return false, fmt.Errorf("store: read customer claim: %w", err)
		}
		if found {
			return true, nil
		}
	}
	return false, nil
}

// Create writes the customer, its two claims, its id's lookup and ev in one
// transaction, each conditioned on being new.
func (s *Customers) Create(ctx context.Context, c customers.Customer, ev events.Event) error {
	t := &store.Txn{}
	emailSK, idSK := claimKeys(c.Email, c.IdentificationNumber)
	for _, it := range []struct {
		name string
		item any
	}{
		{"customer", newCustomerItem(c)},
		{"email", customerClaimItem{PK: schema.CompanyPK(c.CompanyID), SK: emailSK, Type: schema.KindCustomerClaim, CustomerID: c.ID}},
		{"id_number", customerClaimItem{PK: schema.CompanyPK(c.CompanyID), SK: idSK, Type: schema.KindCustomerClaim, CustomerID: c.ID}},
		{"ref", customerRefItem{PK: schema.CustomerRefPK(c.ID), SK: schema.CustomerRefSK, Type: schema.KindCustomerRef, ID: c.ID, CompanyID: c.CompanyID}},
	} {
		av, err := attributevalue.MarshalMap(it.item)
		if err != nil {
			return fmt.Errorf("store: marshal %s: %w", it.name, err)
		}
		t.Add(it.name, types.TransactWriteItem{Put: &types.Put{
			TableName: aws.String(s.db.Table), Item: av, ConditionExpression: aws.String("attribute_not_exists(PK)"),
		}})
	}
	t.Creates(c.ID)
	t.AddEvent(schema.EventItem, ev)
	return s.db.CommitOnce(ctx, "create customer "+c.ID, t, func(_ context.Context, c dynamo.Cancellation) error {
		if c.Failed("email") || c.Failed("id_number") {
			return customers.ErrDuplicate
		}
		return nil
	})
}

// Get reads a customer of the company, strongly consistent.
func (s *Customers) Get(ctx context.Context, companyID, id string) (customers.Customer, error) {
	var it customerItem
	if err := s.db.Get(ctx, "customer "+id, schema.CompanyPK(companyID), schema.CustomerSK(id), &it, customers.ErrNotFound); err != nil {
		return customers.Customer{}, err
	}
	return it.customer()
}

// List reads a page of the company's customers, newest first.
func (s *Customers) List(ctx context.Context, companyID string, p page.Request) (page.Result[customers.Customer], error) {
	lo, hi := dynamo.TimeRange(schema.CustomerSKPrefix, time.Time{}, time.Time{})
	rows, total, next, err := s.db.ReadPage(ctx, dynamo.Listing{
		PKAttr: schema.AttrPK, SKAttr: schema.AttrSK, PK: schema.CompanyPK(companyID),
		Prefix: schema.CustomerSKPrefix, Lo: lo, Hi: hi, Consistent: true,
	}, p)
	if err != nil {
		return page.Result[customers.Customer]{}, fmt.Errorf("store: list customers: %w", err)
	}
	return dynamo.PageOf(rows, total, next, customerItem.customer)
}

// SetCardholder records the issuer's id of a customer; updated_at stays.
func (s *Customers) SetCardholder(ctx context.Context, companyID, id, cardholderID string) error {
	u := store.NewAttrUpdate()
	u.Set("cardholder_id", cardholderID)
	return s.update(ctx, companyID, id, "cardholder_id", u)
}

// SetActive sets a customer's is_active and updated_at.
func (s *Customers) SetActive(ctx context.Context, companyID, id string, active bool, now time.Time) error {
	u := store.NewAttrUpdate()
	u.Set("is_active", active)
	u.Set("updated_at", timestamp.Format(now))
	return s.update(ctx, companyID, id, "is_active", u)
}

// update applies u to an existing customer; what names the change.
func (s *Customers) update(ctx context.Context, companyID, id, what string, u *store.AttrUpdate) error {
	expr, names, values, err := u.Build()
	if err != nil {
		return fmt.Errorf("store: set customer %s: %w", what, err)
	}
	_, err = s.db.Update(ctx, "set customer "+what, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(s.db.Table),
		Key:                       dynamo.Key(schema.CompanyPK(companyID), schema.CustomerSK(id)),
		UpdateExpression:          aws.String(expr),
		ConditionExpression:       aws.String("attribute_exists(PK)"),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
	if dynamo.ConditionFailed(err) {
		return customers.ErrNotFound
	}
	return err
}
