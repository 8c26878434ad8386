package companies

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"payments/pkg/field"
	"payments/pkg/identity"
)

// Owners is what the console needs of the dashboard's user pool
// (identity.Pool): to create a user of a company with a role.
type Owners interface {
	CreateUser(ctx context.Context, companyID, email string, role identity.Role, temporaryPassword string) error
}

// OwnerRequest is a company's first owner, as the console names them.
type OwnerRequest struct {
	Email string
	// TemporaryPassword is the password of their first sign-in, which
	// must meet identity.Policy; "" has the pool choose one and email it
	// (in AWS).
	TemporaryPassword string
}

// Owner is a company's owner as the pool has them.
type Owner struct {
	Email string `json:"email"`
	// Status is the pool's: OwnerInvited until their first sign-in.
	Status string `json:"status"`
}

// OwnerInvited is the pool's status of a user who has not signed in yet
// (Cognito's FORCE_CHANGE_PASSWORD).
const OwnerInvited = "FORCE_CHANGE_PASSWORD"

// MaxEmailLength is the longest email address an owner may have.
const MaxEmailLength = identity.MaxEmailLength

// Errors of the owners.
var (
	// ErrOwnerExists: the owner's email is a user of the dashboard
	// already (of this company or another).
	ErrOwnerExists = errors.New("companies: the owner's email has a dashboard user already")
	// ErrOwnerNotCreated: the user pool did not create the owner (it
	// refused or could not be reached); nothing of them was kept.
	ErrOwnerNotCreated = errors.New("companies: the owner was not created")
)

// Onboarding creates companies with their first owner in the dashboard's
// user pool.
type Onboarding struct {
	companies *Service
	owners    Owners
}

// NewOnboarding returns the Onboarding over the companies service and the
// user pool, or an error naming the one missing.
func NewOnboarding(companies *Service, owners Owners) (*Onboarding, error) {
	switch {
	case companies == nil:
		return nil, errors.New("companies: NewOnboarding: no companies service")
	case owners == nil:
		return nil, errors.New("companies: NewOnboarding: no user pool")
	}
	return &Onboarding{companies: companies, owners: owners}, nil
}

// Create registers a company (Service.Create) and, when owner is not nil,
// its first owner. The owner is checked first, so that a bad one creates
// nothing (field errors name owner.email and owner.temporary_password).
// The company is created before the owner: if the pool then refuses
// (ErrOwnerExists) or fails (ErrOwnerNotCreated), the company is kept and
// returned with the error, and AddOwner, made again, adds the owner.
func (o *Onboarding) Create(ctx context.Context, name string, kyb KYBStatus, owner *OwnerRequest) (Created, *Owner, error) {
	if owner != nil {
		if err := owner.normalize("owner."); err != nil {
			return Created{}, nil, err
		}
	}
	c, err := o.companies.Create(ctx, name, kyb)
	if err != nil || owner == nil {
		return c, nil, err
	}
	added, err := o.create(ctx, c.ID, *owner)
	if err != nil {
		return c, nil, err
	}
	return c, &added, nil
}

// AddOwner creates an owner of the company id in the pool: the first one
// when POST /admin/companies could not, or another (field errors name
// email and temporary_password).
func (o *Onboarding) AddOwner(ctx context.Context, id string, owner OwnerRequest) (Owner, error) {
	if err := owner.normalize(""); err != nil {
		return Owner{}, err
	}
	if _, err := o.companies.Get(ctx, id); err != nil {
		return Owner{}, err
	}
	return o.create(ctx, id, owner)
}

func (o *Onboarding) create(ctx context.Context, companyID string, owner OwnerRequest) (Owner, error) {
	err := o.owners.CreateUser(ctx, companyID, owner.Email, identity.Owner, owner.TemporaryPassword)
	switch {
	case errors.Is(err, identity.ErrUserExists):
		return Owner{}, fmt.Errorf("%w: %w", ErrOwnerExists, err)
	case err != nil:
		// The answer names no cause; the log keeps it for the operator.
		slog.WarnContext(ctx, "owner not created", "company_id", companyID, "error", err)
		return Owner{}, fmt.Errorf("%w: %w", ErrOwnerNotCreated, err)
	}
	return Owner{Email: owner.Email, Status: OwnerInvited}, nil
}

// normalize trims and lower-cases the email (the pool's usernames are not
// case-sensitive) and checks it and the temporary password, naming them
// with prefix ("owner." in a company's body).
func (r *OwnerRequest) normalize(prefix string) error {
	var problem string
	if r.Email, problem = identity.Email(r.Email); problem != "" {
		return field.Invalid(prefix+"email", problem)
	}
	if r.TemporaryPassword != "" {
		if problem := identity.Policy.Problem(r.TemporaryPassword); problem != "" {
			return field.Invalid(prefix+"temporary_password", problem)
		}
	}
	return nil
}
