package customers

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
	"unicode/utf8"

	"payments/pkg/events"
	"payments/pkg/field"
	"payments/pkg/ids"
	"payments/pkg/providers/issuer"
	"payments/pkg/providers/kyc"
	"payments/pkg/timestamp"
)

// PendingReview is the status of a customer enrolled where no KYC verifier
// is configured (production mode, until an adapter exists): its documents
// are stored and it waits for the operator console's decision (Review).
// Like any status but VERIFIED, it is refused cards.
const PendingReview KYCStatus = "PENDING_REVIEW"

// ErrKYCDecided is a console decision on a customer whose identity is not
// PENDING_REVIEW any more: decided by the console (by this request's
// competitor, too) or by a verifier.
var ErrKYCDecided = errors.New("customers: KYC already decided")

// DocumentLinkTTL is how long a link to a document the console is given
// stays valid.
const DocumentLinkTTL = 15 * time.Minute

// MaxReasonLength bounds the reason of a console decision, in characters.
const MaxReasonLength = 1000

// Decision is the operator console's decision on a customer's identity.
type Decision struct {
	// Status is kyc.Verified or kyc.Rejected.
	Status KYCStatus
	// Reason says why; required for REJECTED, where it becomes the
	// customer's kyc_reason, and kept as the review's note for VERIFIED.
	Reason string
	// By names who decided (the console's caller).
	By string
}

// ReviewRecord is who decided a customer's identity at the console, when,
// and what they noted.
type ReviewRecord struct {
	By   string
	Note string
	At   time.Time
}

// DocumentLink is a time-limited link to one side of a customer's stored
// identity document.
type DocumentLink struct {
	Side      string
	URL       string
	ExpiresAt time.Time
}

// ReviewStore is the persistence the console's review needs, beside Store.
type ReviewStore interface {
	Store
	// PendingReview returns a page of the customers of every company whose
	// status is PENDING_REVIEW, oldest first, after the customer id after
	// (""; the first page), and the after of the next page ("" on the
	// last).
	PendingReview(ctx context.Context, after string, limit int) ([]Customer, string, error)
	// CountPendingReview returns how many customers of every company are
	// PENDING_REVIEW.
	CountPendingReview(ctx context.Context) (int, error)
	// ByID reads a customer of any company; ErrNotFound if absent.
	ByID(ctx context.Context, id string) (Customer, error)
	// Decide writes c's KYCStatus, KYCReason, Review and UpdatedAt and ev
	// in one transaction, on the condition that the stored customer is
	// still PENDING_REVIEW (ErrKYCDecided otherwise).
	Decide(ctx context.Context, c Customer, ev events.Event) error
}

// Linker makes time-limited links to stored documents.
type Linker interface {
	// DocumentLink returns a URL that reads the document stored under key
	// for ttl.
	DocumentLink(ctx context.Context, key string, ttl time.Duration) (string, error)
}

// Review is what the operator console does with customers: it lists those
// waiting for review, shows one with links to its documents, and decides.
// A customer it verifies is registered with the card issuer as a
// cardholder, as an enrolment verified by a verifier is.
type Review struct {
	svc   *Service
	store ReviewStore
	links Linker
}

// NewReview returns the Review over store, linking documents with links,
// registering verified customers with iss (issuer.None where none is
// configured: the registration is deferred, as when the issuer is down)
// and publishing with events, on the clock now (nil: time.Now; when a
// decision is recorded, until when a document link is valid), or an error
// naming the one missing.
func NewReview(store ReviewStore, links Linker, iss issuer.Cardholders, events Publisher, now func() time.Time) (*Review, error) {
	switch {
	case store == nil:
		return nil, errors.New("customers: no Store to build the review")
	case links == nil:
		return nil, errors.New("customers: no Linker to build the review")
	case iss == nil:
		return nil, errors.New("customers: no Issuer to build the review (issuer.None where there is no issuer)")
	case events == nil:
		return nil, errors.New("customers: no Events publisher to build the review")
	}
	svc := newService(Deps{Store: store, Issuer: iss, Events: events, Now: now})
	return &Review{svc: svc, store: store, links: links}, nil
}

// Pending returns a page of the customers of every company waiting for
// review, oldest first, and the after of the next page ("" on the last).
func (r *Review) Pending(ctx context.Context, after string, limit int) ([]Customer, string, error) {
	if after != "" && !ids.IsUUID(after) {
		return nil, "", field.Invalid("cursor", "is not a cursor of this list")
	}
	cs, next, err := r.store.PendingReview(ctx, after, limit)
	if err != nil {
		return nil, "", fmt.Errorf("customers: list pending review: %w", err)
	}
	return cs, next, nil
}

// CountPending returns how many customers of every company wait for
// review: the total of the console's list.
func (r *Review) CountPending(ctx context.Context) (int, error) {
	n, err := r.store.CountPendingReview(ctx)
	if err != nil {
		return 0, fmt.Errorf("customers: count pending review: %w", err)
	}
	return n, nil
}

// Get returns customer id of any company with links to its documents, or
// ErrNotFound.
func (r *Review) Get(ctx context.Context, id string) (Customer, []DocumentLink, error) {
	if !ids.IsUUID(id) {
		return Customer{}, nil, ErrNotFound
	}
	c, err := r.store.ByID(ctx, id)
	if err != nil {
		return Customer{}, nil, err
	}
	links, err := r.documentLinks(ctx, c)
	if err != nil {
		return Customer{}, nil, err
	}
	return c, links, nil
}

// Decide records the console's decision on customer id, once: a customer
// not PENDING_REVIEW is ErrKYCDecided, and of two decisions at once exactly
// one is recorded. The customer's new status and customer.kyc.updated are
// written in one transaction; a verified customer is then registered with
// the card issuer (deferred to its first card or a sync when the issuer is
// down or none is configured). It returns the customer as decided with
// links to its documents (none, logged, when they cannot be made: the
// decision stands).
func (r *Review) Decide(ctx context.Context, id string, d Decision) (Customer, []DocumentLink, error) {
	d.Reason = strings.TrimSpace(d.Reason)
	switch {
	case d.Status != kyc.Verified && d.Status != kyc.Rejected:
		return Customer{}, nil, field.Invalid("status", "must be VERIFIED or REJECTED")
	case d.Status == kyc.Rejected && d.Reason == "":
		return Customer{}, nil, field.Invalid("reason", "is required to reject: say why the document does not pass")
	case utf8.RuneCountInString(d.Reason) > MaxReasonLength:
		return Customer{}, nil, field.Invalid("reason", fmt.Sprintf("must be at most %d characters", MaxReasonLength))
	case strings.ContainsFunc(d.Reason, invisible):
		return Customer{}, nil, field.Invalid("reason", "must not contain control characters")
	case !ids.IsUUID(id):
		return Customer{}, nil, ErrNotFound
	}
	c, err := r.store.ByID(ctx, id)
	if err != nil {
		return Customer{}, nil, err
	}
	if c.KYCStatus != PendingReview {
		return Customer{}, nil, ErrKYCDecided
	}
	now := timestamp.Of(r.svc.clock())
	c.KYCStatus, c.KYCReason, c.UpdatedAt = d.Status, "", now
	if d.Status == kyc.Rejected {
		c.KYCReason = d.Reason
	}
	c.Review = &ReviewRecord{By: d.By, Note: d.Reason, At: now}
	ev, err := events.Build(c.CompanyID, kycUpdatedEvent(c), now)
	if err != nil {
		return Customer{}, nil, err
	}
	if err := r.store.Decide(ctx, c, ev); err != nil {
		return Customer{}, nil, fmt.Errorf("customers: decide %s: %w", id, err)
	}
	slog.InfoContext(ctx, "customer KYC decided at the console", "company_id", c.CompanyID, "customer_id", c.ID,
		"kyc_status", c.KYCStatus, "by", d.By)
	if err := r.svc.events.Publish(ctx, ev); err != nil {
		slog.WarnContext(ctx, "publish customer.kyc.updated after commit; the sweeper will", "error", err)
	}
	if c.KYCStatus == kyc.Verified {
		if r.svc.issuer == nil {
			slog.InfoContext(ctx, "no card issuer configured: the cardholder is registered later", "customer_id", c.ID)
		} else if c.CardholderID, err = r.svc.registerCardholder(ctx, c); err != nil {
			slog.WarnContext(ctx, "register the cardholder; the first card or GET /customers?sync=true will", "customer_id", c.ID, "error", err)
		}
	}
	links, err := r.documentLinks(ctx, c)
	if err != nil { // the decision stands: GET /admin/customers/{id} links again
		slog.WarnContext(ctx, "link the documents of a decided customer", "customer_id", c.ID, "error", err)
	}
	return c, links, nil
}

// documentLinks returns a link valid DocumentLinkTTL to each stored side of
// c's document.
func (r *Review) documentLinks(ctx context.Context, c Customer) ([]DocumentLink, error) {
	expires := timestamp.Of(r.svc.clock().Add(DocumentLinkTTL))
	var out []DocumentLink
	for _, d := range []struct {
		side string
		doc  Document
	}{{"front", c.Front}, {"back", c.Back}} {
		if d.doc.Key == "" {
			continue
		}
		u, err := r.links.DocumentLink(ctx, d.doc.Key, DocumentLinkTTL)
		if err != nil {
			return nil, fmt.Errorf("customers: link the %s document of %s: %w", d.side, c.ID, err)
		}
		out = append(out, DocumentLink{Side: d.side, URL: u, ExpiresAt: expires})
	}
	return out, nil
}

// kycUpdatedEvent is the payload of customer.kyc.updated.
func kycUpdatedEvent(c Customer) events.CustomerKYCUpdatedData {
	var reason *string
	if c.KYCReason != "" {
		reason = &c.KYCReason
	}
	return events.CustomerKYCUpdatedData{
		CustomerID: c.ID, KYCStatus: string(c.KYCStatus), KYCReason: reason, UpdatedAt: timestamp.Format(c.UpdatedAt),
	}
}
