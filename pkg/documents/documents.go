// Package documents keeps identity documents in S3 (Store) and signs the
// operator console's links to them (Links). Only the customers function,
// which stores them, and the admin function, which links to them, import
// it; the admin function uses Links alone, which signs without the S3
// client, so only the customers function links that client's code.
package documents

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"payments/pkg/customers"
)

// Store is also the sandbox verifier's kycsandbox.DocumentReader, which
// the customers function gives it (providers.Deps.Documents).
var _ customers.Documents = (*Store)(nil)

// Store keeps identity documents in an S3 bucket. The bucket is
// private, encrypted and versioned (template.yaml); keys start with the
// company's prefix (companies/<company id>/…), which the callers build.
type Store struct {
	client *s3.Client
	bucket string
}

// New returns the document store of bucket through client.
func New(client *s3.Client, bucket string) *Store {
	return &Store{client: client, bucket: bucket}
}

// NewClient returns an S3 client for cfg. When endpoint is set (the S3
// emulator), requests use path-style addresses and checksums are computed
// and validated only where the API requires them, which is what the
// emulator understands.
func NewClient(cfg aws.Config, endpoint string) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
	})
}

// PutDocument stores b under key with its content type.
func (d *Store) PutDocument(ctx context.Context, key, contentType string, b []byte) error {
	_, err := d.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        aws.String(d.bucket),
		Key:           aws.String(key),
		Body:          bytes.NewReader(b),
		ContentLength: aws.Int64(int64(len(b))),
		ContentType:   aws.String(contentType),
	})
	if err != nil {
		return fmt.Errorf("documents: put document %s: %w", key, err)
	}
	return nil
}

// GetDocument returns the bytes stored under key.
func (d *Store) GetDocument(ctx context.Context, key string) ([]byte, error) {
	out, err := d.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(d.bucket), Key: aws.String(key)})
	if err != nil {
		return nil, fmt.Errorf("documents: get document %s: %w", key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		return nil, fmt.Errorf("documents: read document %s: %w", key, err)
	}
	return b, nil
}

// DeleteDocument removes what is stored under key (in a versioned bucket,
// it becomes a non-current version, which the lifecycle rule expires).
func (d *Store) DeleteDocument(ctx context.Context, key string) error {
	_, err := d.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(d.bucket), Key: aws.String(key)})
	if err != nil {
		return fmt.Errorf("documents: delete document %s: %w", key, err)
	}
	return nil
}
