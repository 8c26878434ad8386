// Package tokenkeys loads the token keys of a function that signs or
// checks tokens: from AWS KMS where the template names the keys
// (TOKEN_KEY_A_ARN, TOKEN_KEY_B_ARN; pkg/auth/kmssign), from the local
// keys TOKEN_KEY_A and TOKEN_KEY_B otherwise. Only those functions import
// it, so only they link the KMS client.
package tokenkeys

import (
	"context"
	"crypto/ecdsa"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/kms"

	"payments/pkg/auth"
	"payments/pkg/auth/kmssign"
	"payments/pkg/function"
	"payments/pkg/function/base"
	"payments/pkg/httpapi"
	"payments/pkg/store"
)

// Load returns the keys of cfg: when sign (the auth function), a Signer of
// the signing key (cfg.TokenSigningKey); else that key's public half
// accepted. The standby key's public half is accepted besides, unless
// cfg.TokenStandbyRefused. A KMS key's public half is read once, here, with
// kms:GetPublicKey.
func Load(ctx context.Context, cfg function.Config, sign bool) (base.TokenKeys, error) {
	var client *kms.Client
	var keys base.TokenKeys
	signing := cfg.TokenSigningKey
	if signing != 0 && signing != 1 {
		return keys, fmt.Errorf("%w: token signing key slot %d", function.ErrConfig, signing)
	}
	for _, slot := range []int{signing, 1 - signing} {
		standby := slot != signing
		if standby && cfg.TokenStandbyRefused {
			continue
		}
		arn, local := cfg.TokenKeyARNs[slot], cfg.TokenKeys[slot]
		name := fmt.Sprintf("TOKEN_KEY_%c", 'A'+slot)
		var signer auth.Signer
		var pub *ecdsa.PublicKey
		switch {
		case arn != "":
			if client == nil {
				client = kmssign.NewClient(cfg.AWS, cfg.KMSEndpoint)
			}
			var err error
			if sign && !standby {
				signer, err = kmssign.NewSigner(ctx, client, arn)
			} else {
				pub, err = kmssign.PublicKey(ctx, client, arn)
			}
			if err != nil {
				return keys, fmt.Errorf("%w: %s_ARN: %v", function.ErrConfig, name, err)
			}
		case local != "":
			key, err := auth.LocalKeyFromHex(local)
			if err != nil {
				return keys, fmt.Errorf("%w: %s: %v", function.ErrConfig, name, err)
			}
			if signer, err = auth.NewLocalSigner(key); err != nil {
				return keys, fmt.Errorf("%w: %s: %v", function.ErrConfig, name, err)
			}
			if !sign || standby {
				pub, signer = signer.Public(), nil
			}
		case standby:
			continue // no standby key
		default:
			return keys, fmt.Errorf("%w: %s_ARN is not set (nor %s, a local key)", function.ErrConfig, name, name)
		}
		if signer != nil {
			keys.Signer = signer
		} else {
			keys.Accepted = append(keys.Accepted, pub)
		}
	}
	return keys, nil
}

// Guard returns the token guard of a company-facing function
// (base.TokenGuard) with the keys of cfg, reading companies through
// companyCache (the function's, base.Caches).
func Guard(ctx context.Context, cfg function.Config, db *store.DB, companyCache *auth.CompanyCache) (httpapi.Guard, error) {
	keys, err := Load(ctx, cfg, false)
	if err != nil {
		return nil, err
	}
	return base.TokenGuard(cfg, keys, db, companyCache)
}

// Service returns the auth function's token service over db: it signs
// with the signing key of cfg, limiter rate limits its token requests, and
// companies are read through companyCache (the function's, base.Caches).
func Service(ctx context.Context, cfg function.Config, db *store.DB, limiter auth.RateLimiter, companyCache *auth.CompanyCache) (*auth.Service, error) {
	keys, err := Load(ctx, cfg, true)
	if err != nil {
		return nil, err
	}
	return base.Auth(cfg, keys, db, limiter, companyCache)
}
