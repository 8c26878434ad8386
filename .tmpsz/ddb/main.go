package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func main() {
	cfg := aws.Config{Region: "x", Credentials: credentials.NewStaticCredentialsProvider("a", "b", "")}
	lambda.Start(func(ctx context.Context) (string, error) {
		_ = cfg
		c := dynamodb.NewFromConfig(cfg); c.GetItem(ctx, nil); c.TransactWriteItems(ctx, nil); c.Query(ctx, nil); c.PutItem(ctx, nil); c.UpdateItem(ctx, nil)
		return "hi", nil
	})
}
