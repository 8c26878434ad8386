// Command migrate runs the table's one-off migrations against a stage's
// table (docs/cards.md, "Migration: card secrets"):
//
//	go run ./infra/migrate card-secrets -table payments-prod -mode production|sandbox [-dry-run] [-page 500] [-endpoint URL]
//
// card-secrets takes the sealed number and CVV out of every card item that
// still holds them. In production mode it deletes them
// (moneystore.Cards.RemoveCardSecrets): production keeps no card data, its
// numbers staying at Stripe. In sandbox mode it moves them into each
// card's secrets item, which no index of the table sees, the card keeping
// their tokens (moneystore.Cards.MoveCardSecrets): its reveals still open them.
// It is idempotent and reads the table a page at a time, so it may be
// stopped and run again.
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
	"payments/pkg/store/moneystore"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "migrate:", err)
		os.Exit(1)
	}
}

// errUsage is a command line run cannot take.
var errUsage = errors.New("usage: migrate card-secrets -table <table> -mode production|sandbox [-dry-run] [-page n] [-endpoint url]")

// run runs the migration args name, writing its report to out.
func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "card-secrets" {
		return errUsage
	}
	fs := flag.NewFlagSet("card-secrets", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	table := fs.String("table", "", "the stage's table (payments-<stage>)")
	mode := fs.String("mode", "", "the stage's Mode parameter: production deletes the sealed values, sandbox moves them")
	dryRun := fs.Bool("dry-run", false, "count the cards holding sealed values, change nothing")
	page := fs.Int("page", moneystore.SecretsMigrationPage, "items read per Scan page")
	endpoint := fs.String("endpoint", "", "DynamoDB's endpoint (DynamoDB Local); empty: AWS")
	if err := fs.Parse(args[1:]); err != nil || *table == "" || *page <= 0 || *page > 10000 {
		return errUsage
	}
	if *mode != function.ModeProduction && *mode != function.ModeSandbox {
		return fmt.Errorf("card-secrets: -mode must be %s or %s, not %q", function.ModeProduction, function.ModeSandbox, *mode)
	}
	cfg, err := awsConfig(*endpoint)
	if err != nil {
		return err
	}
	cs := moneystore.NewCards(store.New(store.NewClient(cfg, *endpoint), *table))
	migrate, done := cs.RemoveCardSecrets, "removed from"
	if *mode == function.ModeSandbox {
		migrate, done = cs.MoveCardSecrets, "moved to their own item from"
	}
	res, err := migrate(ctx, int32(*page), *dryRun)
	verb, n := done, res.Removed
	if *dryRun {
		verb, n = "would be "+done+" (dry run)", res.Found
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
