// Command migrate runs the table's one-off migrations against a stage's
// table (docs/cards.md, "Migration: card secrets"):
//
//	go run ./infra/migrate card-secrets -table payments-prod -mode production [-dry-run] [-page 500] [-endpoint URL]
//
// card-secrets deletes the sealed number and CVV of every card item
// (store.Cards.RemoveCardSecrets): production mode keeps no card data, its
// numbers staying at Stripe. It refuses any -mode but production: sandbox
// stages keep them (their reveals open them). It is idempotent and reads
// the table a page at a time, so it may be stopped and run again.
//
// The AWS region and credentials are read from the environment
// (AWS_REGION, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN:
// `eval "$(aws configure export-credentials --format env)"`), as
// `make migrate-card-secrets STAGE=…` sets them; -endpoint is DynamoDB
// Local's URL, for a local table (any credentials).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"payments/pkg/function"
	"payments/pkg/store"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "migrate:", err)
		os.Exit(1)
	}
}

// errUsage is a command line run cannot take.
var errUsage = errors.New("usage: migrate card-secrets -table <table> -mode production [-dry-run] [-page n] [-endpoint url]")

// run runs the migration args name, writing its report to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "card-secrets" {
		return errUsage
	}
	fs := flag.NewFlagSet("card-secrets", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	table := fs.String("table", "", "the stage's table (payments-<stage>)")
	mode := fs.String("mode", "", "the stage's Mode parameter; only production is migrated")
	dryRun := fs.Bool("dry-run", false, "count the cards holding sealed values, change nothing")
	page := fs.Int("page", store.SecretsMigrationPage, "items read per Scan page")
	endpoint := fs.String("endpoint", "", "DynamoDB's endpoint (DynamoDB Local); empty: AWS")
	if err := fs.Parse(args[1:]); err != nil || *table == "" || *page <= 0 || *page > 10000 {
		return errUsage
	}
	if *mode != function.ModeProduction {
		return fmt.Errorf("card-secrets runs in production mode only, not %q: a sandbox stage keeps its cards' sealed values", *mode)
	}
	cfg, err := awsConfig(*endpoint)
	if err != nil {
		return err
	}
	db := store.New(store.NewClient(cfg, *endpoint), *table)
	res, err := store.NewCards(db).RemoveCardSecrets(ctx, int32(*page), *dryRun)
	verb, n := "removed from", res.Removed
	if *dryRun {
		verb, n = "would be removed from (dry run)", res.Found
	}
	fmt.Fprintf(out, "%s: %d items scanned in %d pages; sealed number and CVV %s %d of %d cards\n",
		*table, res.Scanned, res.Pages, verb, n, res.Found)
	return err
}

// awsConfig is the environment's AWS configuration; against a local
// endpoint, any region and credentials do.
func awsConfig(endpoint string) (aws.Config, error) {
	if endpoint != "" {
		return aws.Config{Region: "us-east-1", Credentials: credentials.NewStaticCredentialsProvider("local", "local", "")}, nil
	}
	return function.AWSFromEnv()
}
