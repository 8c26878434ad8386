package customers

import (
	"context"
	"errors"

	"payments/pkg/page"
)

// Directory reads a company's customers: Service.Get and Service.List
// without their sync. It needs the customers' store alone: never the
// documents, the KYC verifier, the card issuer or a publisher, so that
// what is built over it (the company dashboard) enrols, registers and
// changes no customer.
type Directory struct{ svc *Service }

// NewDirectory returns the Directory over store, or an error when store
// is nil.
func NewDirectory(store Store) (*Directory, error) {
	if store == nil {
		return nil, errors.New("customers: no Store to build the directory")
	}
	return &Directory{newService(Deps{Store: store})}, nil
}

// Get is Service.Get.
func (d *Directory) Get(ctx context.Context, companyID, id string) (Customer, error) {
	return d.svc.Get(ctx, companyID, id)
}

// List is Service.List without its sync: page p of the company's
// customers, newest first, as stored.
func (d *Directory) List(ctx context.Context, companyID string, p page.Request) (page.Result[Customer], error) {
	return d.svc.List(ctx, companyID, p, false)
}
