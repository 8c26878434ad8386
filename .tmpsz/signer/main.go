package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"time"
)

func main() {
	cfg := aws.Config{Region: "x", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	lambda.Start(func(ctx context.Context) (string, error) {
		_ = cfg
		var s v4.Signer; s.SignHTTP(ctx, aws.Credentials{}, nil, "", "s", "r", time.Now())
		return "hi", nil
	})
}
