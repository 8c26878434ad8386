package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
)

func main() {
	cfg := aws.Config{Region: "x", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	lambda.Start(func(ctx context.Context) (string, error) {
		_ = cfg
		c := kms.NewFromConfig(cfg); c.GenerateDataKey(ctx, nil); c.Decrypt(ctx, nil)
		return "hi", nil
	})
}
