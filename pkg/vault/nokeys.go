package vault

import (
	"context"
	"errors"
)

// ErrNoKeys is a data key asked of NoKeys.
var ErrNoKeys = errors.New("vault: this function seals and opens no secret")

// NoKeys is the KeyService of a function that seals and opens no card
// secret (the card-network sandbox's, and every function's in production
// mode, where the issuer keeps them): it refuses both, so that a vault over
// it fails whatever is asked of it.
var NoKeys KeyService = noKeys{}

type noKeys struct{}

func (noKeys) NewDataKey(context.Context, Context) (plain, encrypted []byte, keyID string, err error) {
	return nil, nil, "", ErrNoKeys
}

func (noKeys) OpenDataKey(context.Context, []byte, string, Context) ([]byte, error) {
	return nil, ErrNoKeys
}
