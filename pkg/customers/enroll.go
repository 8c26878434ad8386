package customers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"sync"

	"payments/pkg/companies"
	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/ids"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/kyc"
	"payments/pkg/timestamp"
)

// File is an uploaded document of POST /customers.
type File struct {
	// Field is the form field it came in (id_document_front or
	// id_document_back).
	Field string
	Data  []byte
}

// document is one side of an identity document on its way to storage.
type document struct {
	field, side string
	data        []byte
	contentType string
	source      string // the URL it was fetched from, "" for an upload
}

// EnrollFromURLs enrols a customer of the company whose documents are at
// the two URLs of in (POST /customers/enroll). The checks run in this
// order: the fields (400 naming the field; a URL that is not https is
// "document URL must be HTTPS"), the company's KYB (companies.ErrKYBNotApproved), the
// uniqueness of the email and identification number (ErrDuplicate), then
// the documents are fetched (ErrDocumentNotFetched, ErrDocumentUnreadable,
// on the URL's field). Nothing is stored until all of them pass.
func (s *Service) EnrollFromURLs(ctx context.Context, companyID string, in Fields) (Customer, error) {
	c, err := validate(in, s.clock())
	if err != nil {
		return Customer{}, err
	}
	front, err := checkURL(FieldFrontURL, in.FrontURL)
	if err != nil {
		return Customer{}, err
	}
	back, err := checkURL(FieldBackURL, in.BackURL)
	if err != nil {
		return Customer{}, err
	}
	if err := s.admit(ctx, companyID, c); err != nil {
		return Customer{}, err
	}
	docs := [2]document{{field: FieldFrontURL, side: "front", source: front}, {field: FieldBackURL, side: "back", source: back}}
	fetchCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(docs))
	for i := range docs {
		wg.Go(func() {
			if errs[i] = s.fetch(fetchCtx, &docs[i]); errs[i] != nil {
				cancel() // the other document is not needed any more
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		// The front's error first, and a fetch cut short by the other's
		// failure is not the cause.
		if err != nil && (i == len(errs)-1 || !errors.Is(err, context.Canceled)) {
			return Customer{}, err
		}
	}
	return s.enroll(ctx, companyID, c, docs)
}

// EnrollWithFiles enrols a customer of the company from uploaded documents
// (POST /customers): the checks of EnrollFromURLs, with the files instead
// of the URLs of f, which are ignored (ErrDocumentUnreadable on the file's
// field).
func (s *Service) EnrollWithFiles(ctx context.Context, companyID string, f Fields, front, back File) (Customer, error) {
	c, err := validate(f, s.clock())
	if err != nil {
		return Customer{}, err
	}
	if err := s.admit(ctx, companyID, c); err != nil {
		return Customer{}, err
	}
	docs := [2]document{{field: front.Field, side: "front", data: front.Data}, {field: back.Field, side: "back", data: back.Data}}
	for i := range docs {
		if err := sniff(&docs[i]); err != nil {
			return Customer{}, err
		}
	}
	return s.enroll(ctx, companyID, c, docs)
}

// admit checks what a company must be and what its other customers must
// not have before any document is fetched or stored.
func (s *Service) admit(ctx context.Context, companyID string, c Customer) error {
	ok, err := s.companies.KYBApproved(ctx, companyID)
	if err != nil {
		return fmt.Errorf("customers: check KYB: %w", err)
	}
	if !ok {
		return companies.ErrKYBNotApproved
	}
	taken, err := s.store.Taken(ctx, companyID, c.Email, c.IdentificationNumber)
	if err != nil {
		return fmt.Errorf("customers: check uniqueness: %w", err)
	}
	if taken {
		return ErrDuplicate
	}
	return nil
}

// fetch reads d.source into d. What cannot be fetched is
// ErrDocumentNotFetched on d's field; the cause is logged, never answered,
// and the log names the URL's host only: a signed URL's query is a
// credential.
func (s *Service) fetch(ctx context.Context, d *document) error {
	res, err := s.fetcher.Get(ctx, d.source)
	if err == nil && (res.StatusCode < 200 || res.StatusCode > 299) {
		err = fmt.Errorf("answered HTTP %d", res.StatusCode)
	}
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		host := ""
		if u, perr := url.Parse(d.source); perr == nil {
			host = u.Host
		}
		slog.InfoContext(ctx, "document URL not fetched", "field", d.field, "host", host, "error", err)
		return field.On(fmt.Errorf("%w: %s: %w", ErrDocumentNotFetched, host, err), d.field)
	}
	d.data = res.Body
	return sniff(d)
}

// sniff sets d's content type from its bytes: ErrDocumentUnreadable on d's
// field unless they are a JPEG, PNG or PDF.
func sniff(d *document) error {
	t, ok := kyc.ContentType(d.data)
	if !ok {
		return field.On(ErrDocumentUnreadable, d.field)
	}
	d.contentType = t
	return nil
}

// enroll stores the documents, has them verified (or, with no verifier,
// leaves the customer PENDING_REVIEW for the operator console), then stores
// the customer with its claims and customer.created in one transaction, and
// registers a verified customer with the card issuer (later, when the
// issuer is down or none is configured). The documents of an enrolment that
// stores no customer are deleted.
func (s *Service) enroll(ctx context.Context, companyID string, c Customer, docs [2]document) (Customer, error) {
	now := timestamp.Of(s.clock())
	c.ID = ids.NewV7(now)
	c.CompanyID = companyID
	c.IsActive = true
	c.CreatedAt, c.UpdatedAt = now, now
	var written []string
	discard := func() {
		for _, key := range written {
			if err := s.documents.DeleteDocument(context.WithoutCancel(ctx), key); err != nil {
				slog.WarnContext(ctx, "delete the document of an enrolment that stored no customer", "key", key, "error", err)
			}
		}
	}
	var kycDocs []kyc.Document
	for _, d := range docs {
		key := documentKey(companyID, c.ID, d.side)
		written = append(written, key) // a failed put may still have written it
		if err := s.documents.PutDocument(ctx, key, d.contentType, d.data); err != nil {
			discard()
			return Customer{}, fmt.Errorf("customers: store %s document: %w", d.side, err)
		}
		doc := Document{Key: key, ContentType: d.contentType, Size: int64(len(d.data)), Source: d.source, Reference: d.source}
		if d.source == "" {
			doc.Reference = uploadReference(c.ID, d.side)
		}
		if d.side == "front" {
			c.Front = doc
		} else {
			c.Back = doc
		}
		kycDocs = append(kycDocs, kyc.Document{Side: d.side, Key: key, ContentType: d.contentType})
	}
	c.KYCStatus = PendingReview
	if s.verifier != nil {
		decision, err := s.verifier.Verify(ctx, kyc.Request{
			Reference: c.ID, FirstName: c.FirstName, LastName: c.LastName, DateOfBirth: c.DateOfBirth,
			CountryISOCode: c.CountryISOCode, IdentificationNumber: c.IdentificationNumber,
			DocumentType: string(c.DocumentType), Documents: kycDocs,
		})
		if err != nil {
			discard()
			return Customer{}, fmt.Errorf("%w: %w", ErrVerifierUnavailable, err)
		}
		c.KYCStatus, c.KYCReason, c.KYCID = decision.Status, decision.Reason, decision.ID
	}

	ev, err := events.Build(companyID, createdEvent(c), now)
	if err != nil {
		discard()
		return Customer{}, err
	}
	if err := s.store.Create(ctx, c, ev); err != nil {
		stored, known := false, true
		if !errors.Is(err, ErrDuplicate) {
			stored, known = s.stored(ctx, c)
		}
		switch {
		case !known: // the customer may exist: its documents stay
			return Customer{}, fmt.Errorf("customers: create: %w", err)
		case !stored:
			discard()
			return Customer{}, fmt.Errorf("customers: create: %w", err)
		}
		slog.WarnContext(ctx, "create customer answered an error, but the customer is stored", "customer_id", c.ID, "error", err)
	}
	slog.InfoContext(ctx, "customer enrolled", "company_id", companyID, "customer_id", c.ID, "kyc_status", c.KYCStatus)
	if err := s.events.Publish(ctx, ev); err != nil {
		slog.WarnContext(ctx, "publish customer.created after commit; the sweeper will", "error", err)
	}
	switch {
	case c.KYCStatus != kyc.Verified:
	case s.issuer == nil:
		slog.InfoContext(ctx, "no card issuer configured: the cardholder is registered later", "customer_id", c.ID)
	default:
		if c.CardholderID, err = s.registerCardholder(ctx, c); err != nil {
			slog.WarnContext(ctx, "register the cardholder; GET /customers?sync=true will", "customer_id", c.ID, "error", err)
		}
	}
	return c, nil
}

// stored reads c again after a write whose answer was an error, and
// reports whether it was stored and whether that is known (the read
// answered).
func (s *Service) stored(ctx context.Context, c Customer) (stored, known bool) {
	_, err := s.store.Get(context.WithoutCancel(ctx), c.CompanyID, c.ID)
	if errors.Is(err, ErrNotFound) {
		return false, true
	}
	return err == nil, err == nil
}

// Cardholder returns the card issuer's id of verified customer c,
// registering it first when it has none (the first card of a customer
// whose registration at enrolment failed).
func (s *Service) Cardholder(ctx context.Context, c Customer) (string, error) {
	if c.CardholderID != "" {
		return c.CardholderID, nil
	}
	if s.issuer == nil {
		return "", ErrNoProviders
	}
	return s.registerCardholder(ctx, c)
}

// registerCardholder registers verified customer c with the card issuer
// (which answers the same cardholder to the same customer id, so it may be
// asked again) and records the issuer's id on the customer.
func (s *Service) registerCardholder(ctx context.Context, c Customer) (string, error) {
	ch, err := s.issuer.EnrollCardholder(ctx, issuer.CardholderRequest{
		Reference: c.ID, FirstName: c.FirstName, LastName: c.LastName, Email: c.Email,
		PhoneCountryCode: c.PhoneCountryCode, PhoneNumber: c.PhoneNumber, DateOfBirth: c.DateOfBirth,
		Address: issuer.Address{
			Street: c.Street, City: c.City, State: c.State, PostalCode: c.PostalCode, CountryISOCode: c.CountryISOCode,
		},
		IdentificationNumber: c.IdentificationNumber, DocumentType: string(c.DocumentType),
	})
	if err != nil {
		return "", fmt.Errorf("customers: enrol cardholder: %w", err)
	}
	if err := s.store.SetCardholder(ctx, c.CompanyID, c.ID, ch.ID); err != nil {
		return "", fmt.Errorf("customers: record cardholder: %w", err)
	}
	return ch.ID, nil
}

// documentKey is where a side of a customer's identity document is stored:
// under the company's prefix.
func documentKey(companyID, customerID, side string) string {
	return "companies/" + companyID + "/" + uploadReference(customerID, side)
}

// uploadReference is what image or photo shows for an uploaded side of a
// customer's document: our reference to it, the key without the company
// prefix.
func uploadReference(customerID, side string) string {
	return "customers/" + customerID + "/id_document_" + side
}

// createdEvent is the payload of customer.created.
func createdEvent(c Customer) events.CustomerCreatedData {
	return events.CustomerCreatedData{
		CustomerID: c.ID, FirstName: c.FirstName, LastName: c.LastName, Email: c.Email, Country: c.Country,
		PhoneCountryCode: c.PhoneCountryCode, PhoneNumber: c.PhoneNumber, KYCStatus: string(c.KYCStatus),
		IsActive: c.IsActive, CreatedAt: timestamp.Format(c.CreatedAt),
	}
}
