// Package customers holds a company's customers: the people it issues cards
// to. Enrolment validates the declared identity, fetches (or receives) the
// two sides of an identity document, stores them, has the KYC verifier check
// them (where none is configured, the customer waits for the operator
// console's decision: PendingReview, Review), stores the customer with
// claims that keep its email and identification number unique in the
// company, emits customer.created in the same transaction, and registers a
// verified customer with the card issuer as a cardholder.
package customers

import (
	"context"
	"errors"
	"time"

	"payments/pkg/events"
	"payments/pkg/outbound"
	"payments/pkg/page"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/kyc"
)

// Errors of this package; the catalogue (pkg/function/errors.go) maps them to HTTP.
var (
	// ErrNotFound is a customer that does not exist for the caller's
	// company.
	ErrNotFound = errors.New("customers: customer not found")
	// ErrDuplicate is an email or identification number another customer
	// of the company has.
	ErrDuplicate = errors.New("customers: customer with this email or ID already exists")
	// ErrDocumentNotFetched is a document URL that could not be fetched:
	// a refused address, a DNS failure, a non-2xx answer, a time-out or a
	// body over MaxDocumentBytes. It is returned on the URL's field.
	ErrDocumentNotFetched = errors.New("customers: could not fetch a document URL")
	// ErrDocumentUnreadable is a document that is not a JPEG, PNG or PDF
	// by its content. It is returned on the document's field.
	ErrDocumentUnreadable = errors.New("customers: KYC document unreadable")
	// ErrFileTooLarge is an uploaded file over MaxUploadBytes, returned on
	// the file's field.
	ErrFileTooLarge = errors.New("customers: file too large")
	// ErrNotMultipart is a POST /customers whose body is not
	// multipart/form-data.
	ErrNotMultipart = errors.New("customers: body is not multipart/form-data")
	// ErrNoProviders is a sync, or the registration of a cardholder, asked
	// of a deployment that has no card issuer (production mode, until its
	// adapter exists). An enrolment without a KYC verifier is not refused:
	// the customer waits for review (PendingReview).
	ErrNoProviders = errors.New("customers: no card issuer configured")
	// ErrVerifierUnavailable is a KYC verifier that could not decide now;
	// nothing was stored and the enrolment can be retried.
	ErrVerifierUnavailable = errors.New("customers: KYC verifier unavailable")
	// ErrIssuerUnavailable is a card issuer that could not be read for a
	// sync; nothing was changed.
	ErrIssuerUnavailable = errors.New("customers: card issuer unavailable")
)

// Limits of enrolment documents.
const (
	// MaxDocumentBytes is the largest document fetched from a URL.
	MaxDocumentBytes = 10 << 20
	// MaxUploadBytes is the largest file of a multipart enrolment: Lambda
	// takes at most 6 MB of request, and a request carries two files.
	MaxUploadBytes = 2 << 20
	// FetchTimeout bounds the fetch of one document URL.
	FetchTimeout = 10 * time.Second
)

// PageSize is the default page size of GET /customers (spec §8).
const PageSize = 10

// DocumentType is the type of identity document.
type DocumentType string

// Document types (spec §4.2).
const (
	NIN            DocumentType = "NIN"
	Passport       DocumentType = "PASSPORT"
	VotersCard     DocumentType = "VOTERS_CARD"
	DriversLicense DocumentType = "DRIVERS_LICENSE"
)

// Document is one side of an identity document as we stored it.
type Document struct {
	// Key is where it is stored: under the company's prefix in the
	// documents bucket.
	Key string
	// ContentType is what its content is: image/jpeg, image/png or
	// application/pdf.
	ContentType string
	// Size is its length in bytes.
	Size int64
	// Source is the URL it was fetched from, or "" for an upload.
	Source string
	// Reference is what the customer's image or photo shows: Source, or
	// for an upload our reference to it (customers/<id>/id_document_<side>).
	Reference string
}

// KYCStatus is the verifier's (or the operator console's) decision on a
// customer's identity document, as the customer record keeps it, or
// PendingReview.
type KYCStatus = kyc.Status

// Customer is a company's customer.
type Customer struct {
	ID                   string
	CompanyID            string
	FirstName            string
	LastName             string
	Email                string
	Country              string
	Street               string
	City                 string
	State                string
	PostalCode           string
	CountryISOCode       string
	PhoneCountryCode     string
	PhoneNumber          string
	IdentificationNumber string
	DocumentType         DocumentType
	DateOfBirth          time.Time
	Front, Back          Document
	KYCStatus            kyc.Status
	KYCReason            string
	KYCID                string
	// Review is who decided KYCStatus at the operator console, when and
	// why; nil for a customer the console has not decided.
	Review *ReviewRecord
	// CardholderID is the issuer's id of the customer, once registered.
	CardholderID string
	IsActive     bool
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Companies answers whether a company may enrol customers.
type Companies interface {
	// KYBApproved reports whether company companyID has KYB status
	// APPROVED. An unknown company is not approved.
	KYBApproved(ctx context.Context, companyID string) (bool, error)
}

// Store is the persistence the service needs.
type Store interface {
	// Taken reports whether another customer of the company has the email
	// or the identification number (compared by EmailKey and IDNumberKey).
	Taken(ctx context.Context, companyID, email, idNumber string) (bool, error)
	// Create writes c, the claims of its email and identification number
	// and ev in one transaction; ErrDuplicate when a claim is taken.
	Create(ctx context.Context, c Customer, ev events.Event) error
	// Get reads a customer of the company; ErrNotFound if absent.
	Get(ctx context.Context, companyID, id string) (Customer, error)
	// List reads a page of the company's customers, newest first.
	List(ctx context.Context, companyID string, p page.Request) (page.Result[Customer], error)
	// SetCardholder records the issuer's id of a customer (not a change
	// the customer's updated_at shows: the id is not part of it).
	SetCardholder(ctx context.Context, companyID, id, cardholderID string) error
	// SetActive sets a customer's is_active.
	SetActive(ctx context.Context, companyID, id string, active bool, now time.Time) error
}

// Documents stores identity documents.
type Documents interface {
	// PutDocument stores b under key.
	PutDocument(ctx context.Context, key, contentType string, b []byte) error
	// DeleteDocument removes what is stored under key.
	DeleteDocument(ctx context.Context, key string) error
}

// Fetcher fetches document URLs (NewFetcher).
type Fetcher interface {
	// Get returns the answer to a GET of rawURL with its whole body.
	Get(ctx context.Context, rawURL string) (outbound.Response, error)
}

// NewFetcher returns the client that fetches document URLs under the rules
// of pkg/outbound, with the limits of enrolment: FetchTimeout and
// MaxDocumentBytes. opts come after them (tests shorten the time-out).
func NewFetcher(opts ...outbound.Option) *outbound.Client {
	return outbound.New(append([]outbound.Option{
		outbound.WithTimeout(FetchTimeout), outbound.WithMaxBody(MaxDocumentBytes),
	}, opts...)...)
}

// Publisher queues committed events.
type Publisher interface {
	// Publish queues evs; an event it could not queue is left for the
	// sweeper.
	Publish(ctx context.Context, evs ...events.Event) error
}

// Deps are what a Service is built from; NewService refuses a Deps
// without one of them.
type Deps struct {
	Store     Store
	Companies Companies
	Documents Documents
	Fetcher   Fetcher
	// Verifier and Issuer are kyc.None and issuer.None where none is
	// configured, which NewService keeps as nil: an enrolment then waits
	// for review (PendingReview), the registration of a verified customer
	// as a cardholder is deferred, and a sync is ErrNoProviders.
	Verifier kyc.Verifier
	Issuer   issuer.Cardholders
	Events   Publisher
	// Now is the clock (default time.Now); tests give one they move.
	Now func() time.Time
}

// Service enrols, lists and reads customers.
type Service struct {
	store     Store
	companies Companies
	documents Documents
	fetcher   Fetcher
	// verifier and issuer are nil for kyc.None and issuer.None.
	verifier kyc.Verifier
	issuer   issuer.Cardholders
	events   Publisher
	clock    func() time.Time
}

// newService returns a Service over d as it is, kyc.None and issuer.None
// taken for none.
func newService(d Deps) *Service {
	s := &Service{store: d.Store, companies: d.Companies, documents: d.Documents, fetcher: d.Fetcher,
		verifier: d.Verifier, issuer: d.Issuer, events: d.Events, clock: d.Now}
	if d.Verifier == kyc.None {
		s.verifier = nil
	}
	if d.Issuer == issuer.None {
		s.issuer = nil
	}
	if s.clock == nil {
		s.clock = time.Now
	}
	return s
}

// NewService returns a Service over d, or an error naming the dependency
// d lacks: every one but Now is required.
func NewService(d Deps) (*Service, error) {
	switch {
	case d.Store == nil:
		return nil, errors.New("customers: no Store to build the service")
	case d.Companies == nil:
		return nil, errors.New("customers: no Companies to build the service")
	case d.Documents == nil:
		return nil, errors.New("customers: no Documents to build the service")
	case d.Fetcher == nil:
		return nil, errors.New("customers: no Fetcher to build the service")
	case d.Verifier == nil:
		return nil, errors.New("customers: no Verifier to build the service (kyc.None where there is no verifier)")
	case d.Issuer == nil:
		return nil, errors.New("customers: no Issuer to build the service (issuer.None where there is no issuer)")
	case d.Events == nil:
		return nil, errors.New("customers: no Events publisher to build the service")
	}
	return newService(d), nil
}

// Cardholders reads customers and registers them with the card issuer:
// all the cards service asks of customers. It needs the customers' store,
// the issuer and a publisher of the events; never the documents, the KYC
// verifier or the companies.
type Cardholders struct{ svc *Service }

// NewCardholders returns the Cardholders over store and iss (issuer.None
// where none is configured, which registers no cardholder:
// ErrNoProviders), publishing with events, or an error naming the one
// missing.
func NewCardholders(store Store, iss issuer.Cardholders, events Publisher) (*Cardholders, error) {
	switch {
	case store == nil:
		return nil, errors.New("customers: no Store to build the cardholders")
	case iss == nil:
		return nil, errors.New("customers: no Issuer to build the cardholders (issuer.None where there is no issuer)")
	case events == nil:
		return nil, errors.New("customers: no Events publisher to build the cardholders")
	}
	return &Cardholders{newService(Deps{Store: store, Issuer: iss, Events: events})}, nil
}

// Get is Service.Get.
func (c *Cardholders) Get(ctx context.Context, companyID, id string) (Customer, error) {
	return c.svc.Get(ctx, companyID, id)
}

// Cardholder is Service.Cardholder.
func (c *Cardholders) Cardholder(ctx context.Context, cu Customer) (string, error) {
	return c.svc.Cardholder(ctx, cu)
}
