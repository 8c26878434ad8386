// Command hello is the floor of make coldstart: the smallest Go function
// aws-lambda-go runs, built with the same flags as the project's functions
// and started the same way, so that their init times are read against it.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context) (string, error) { return "hello", nil })
}
