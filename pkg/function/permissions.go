package function

import (
	"slices"
	"strings"
)

// Function is what one function reads from its environment and calls in
// AWS. ConfigFromEnv reads exactly these variables; template.yaml gives the
// function exactly these variables and policy statements; and the package's
// tests record every AWS call each function makes and check it against its
// grants.
type Function struct {
	// Settings are the plain variables it reads: MODE, TOKEN_TTL_SECONDS, …
	Settings []string
	// Grants are the AWS actions it calls, resource by resource.
	Grants []Grant
	// Unsigned are the AWS actions it calls that IAM does not authorize,
	// resource by resource: Cognito's sign-in API (InitiateAuth and the
	// answers to its challenges), which the user pool's app client
	// authorizes. The template grants them nothing; its variables name
	// their resources.
	Unsigned []Grant
}

// Grant allows actions on one resource. Resource is the environment
// variable that names the resource (TABLE_NAME, PAYOUTS_QUEUE_URL,
// TOKEN_KEY_A_ARN), optionally followed by the part of it the actions
// apply to, as in its ARN: "TABLE_NAME/index/*" is the table's indexes. A
// Resource that starts with "@" is one of StackResources instead, named by
// no variable.
type Grant struct {
	Resource string
	Actions  []string
}

// Variable returns the environment variable that names g's resource, or ""
// for one of StackResources.
func (g Grant) Variable() string {
	if strings.HasPrefix(g.Resource, "@") {
		return ""
	}
	v, _, _ := strings.Cut(g.Resource, "/")
	return v
}

// CommonSettings are the settings every function reads, which the template
// gives once, in its Globals.
var CommonSettings = []string{metricsNamespace, stageSetting, modeSetting, alarmEmail}

// Variables returns every environment variable f reads, sorted: the
// common settings, its own and the variables naming the resources of its
// grants.
func (f Function) Variables() []string {
	vars := slices.Concat(CommonSettings, f.Settings)
	for _, g := range slices.Concat(f.Grants, f.Unsigned) {
		if v := g.Variable(); v != "" {
			vars = append(vars, v)
		}
	}
	slices.Sort(vars)
	return slices.Compact(vars)
}

// The resources functions are granted actions on.
const (
	tableResource   = "TABLE_NAME"
	indexesResource = "TABLE_NAME/index/*" // a Query with an IndexName
	auditTable      = "AUDIT_TABLE_NAME"   // the operators' audit trail: added to and read, never changed
	payoutsQueue    = "PAYOUTS_QUEUE_URL"
	bulkQueue       = "BULK_PAYOUTS_QUEUE_URL" // bulk batches' chunk jobs and items, consumed by the payout-worker apart
	webhooksQueue   = "WEBHOOKS_QUEUE_URL"
	fundsQueue      = "FUNDS_QUEUE_URL"           // the sandbox bank's answers, consumed by the fund-worker
	documentsBucket = "DOCUMENTS_BUCKET/*"        // the objects of the documents bucket
	tokenKeyA       = "TOKEN_KEY_A_ARN"           // the token keys: the auth function signs with one,
	tokenKeyB       = "TOKEN_KEY_B_ARN"           // every token function reads their public keys
	adminKeySecret  = "ADMIN_API_KEY_ARN"         // read by the operator console
	dashboardKey    = "DASHBOARD_SESSION_KEY_ARN" // seals the dashboard's session cookies
	cardKey         = "CARD_KEY_ARN"              // the KMS key that seals card secrets
	webhookKey      = "WEBHOOK_KEY_ARN"           // the KMS key that seals webhook signing secrets

	operatorToken = "OPERATOR_API_TOKEN_ARN" // the aggregator's API token (production mode)
	issuerKey     = "ISSUER_API_KEY_ARN"     // the card issuer's API key (production mode: Stripe's)

	// userPool is the company dashboard's user pool (Cognito's, by its
	// id), on which the console creates a company's first owner.
	userPool = "USER_POOL_ID"

	// The issuer-webhooks function's.
	issuerEvents = "ISSUER_EVENTS_QUEUE_URL"   // the card issuer's notifications, consumed by the card-worker
	issuerSecret = "ISSUER_WEBHOOK_SECRET_ARN" // verifies the card issuer's notifications
)

// Settings read by more than one function.
const (
	metricsNamespace = "METRICS_NAMESPACE" // every function's (CommonSettings)
	stageSetting     = "STAGE"             // every function's: a deployed stack's refusals (Config.Deployed)
	alarmEmail       = "ALARM_EMAIL"       // every function's: a deployed production stage needs one
	modeSetting      = "MODE"
	deadlineSetting  = "PAYMENT_DEADLINE_SECONDS"
	operatorURL      = "OPERATOR_BASE_URL" // the aggregator's API (production mode)
	issuerURL        = "ISSUER_BASE_URL"   // the card issuer's API (production mode)
	// reconciliationWindow is where a provider's first reconciliation
	// starts (the sweeper's and the console's).
	reconciliationWindow = "RECONCILIATION_FIRST_WINDOW_HOURS"
	// userPoolClient is the dashboard's app client of the user pool: a
	// resource of the template, but one no IAM action names.
	userPoolClient = "USER_POOL_CLIENT_ID"
)

// companyLimits are the settings of every company-facing function: the
// limits of its requests by route class (limits.Limits).
var companyLimits = []string{"RATE_LIMIT_READ", "RATE_LIMIT_MONEY", "RATE_LIMIT_REVEAL"}

// StackResources are the resources a Grant names without a variable
// ("@…"), by the ARN that template.yaml's policy statements give them
// (!Sub). They are the deploy-check function's: it reads the deployment
// CodeDeploy runs and invokes the new version of the function deployed.
var StackResources = map[string]string{
	// The versions of the stack's functions ("…:function:name:3"), not
	// their unqualified $LATEST: a function without a FunctionName is named
	// <stack>-<LogicalId>-<suffix>. (A stack named as this one's prefix,
	// payments-dev and payments-dev-2, would match too: stage names do not.)
	stackFunctions: "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}:function:${AWS::StackName}-*:*",
	// The deployment groups of the stack's CodeDeploy application, which
	// SAM creates for DeploymentPreference and CloudFormation names
	// <stack>-ServerlessDeploymentApplication-<suffix>. The service
	// authorization reference lists the deployment group as the resource of
	// both GetDeployment and PutLifecycleEventHookExecutionStatus.
	deploymentGroups: "arn:${AWS::Partition}:codedeploy:${AWS::Region}:${AWS::AccountId}:deploymentgroup:${AWS::StackName}-*/*",
}

// The resources of StackResources.
const (
	stackFunctions   = "@functions"
	deploymentGroups = "@deployment-groups"
)

// tokenSettings are the settings of the functions that sign or check
// tokens: which key signs, whether the other is accepted, the iss claim.
var tokenSettings = []string{"TOKEN_SIGNING_KEY", "TOKEN_STANDBY_KEY", "TOKEN_ISSUER"}

// tokenVerify is what a function that checks tokens may do with the token
// keys: read their public halves, never sign (docs/auth.md).
var tokenVerify = []Grant{
	{tokenKeyA, []string{"kms:GetPublicKey"}},
	{tokenKeyB, []string{"kms:GetPublicKey"}},
}

// getSecret is the one action on a secret.
var getSecret = []string{"secretsmanager:GetSecretValue"}

// sendMessage is the one action of a producer on a queue. The consumers'
// own receive and delete actions come with their SQS event source (SAM adds
// them for an SQS event), not from their code.
var sendMessage = []string{"sqs:SendMessage"}

// Functions maps each function's folder name under functions/ to what it
// uses. A TransactWriteItems needs the action of each kind of item in it
// (dynamodb:PutItem for a Put, dynamodb:ConditionCheckItem for a
// ConditionCheck, …); a Query on an index needs "TABLE_NAME/index/*".
// Links are the domain and provider packages each function may link (by
// path under pkg/, a trailing "/..." for a folder and all under it, and
// "stripe-go" for Stripe's library): TestFunctionsLinkOnlyWhatTheyServe
// fails when a function links one its row does not name. The functions
// built on pkg/function/services link every domain and provider (services)
// because services builds them all, and those that call Stripe Issuing or
// hear from it Stripe's library too (everything); the others say what they
// serve.
var Links = map[string][]string{
	"openapi":         {"limits"},
	"dashboard":       append(slices.Clip(services), "stripe-go"),
	"deploy-check":    {"limits"},
	"auth":            companyServing,
	"issuer-webhooks": {"companies", "events", "issuerhooks", "limits", "webhooks", "providers/issuer", "providers/issuer/stripeissuing", "stripe-go"},
	"operator-callbacks": {"companies", "events", "fees", "idempotency", "limits", "operatorhooks", "payments", "wallets", "webhooks",
		"providers/bank", "providers/operator", "providers/operator/pawapay"},
	"admin":                 everything,
	"card-network":          everything,
	"card-worker":           services,
	"cards":                 everything,
	"customers":             everything,
	"fund-worker":           services,
	"issuer-authorizations": everything,
	"payments":              services,
	"payout-worker":         services,
	"stripe-webhooks":       everything,
	"sweeper":               everything,
	"wallets":               services,
	"webhook-worker":        companyServing,
	"webhooks":              companyServing,
}

// companyServing is what a function links that serves a company's
// requests but none of its money (auth, webhooks) or delivers to it
// (webhook-worker): the token guard's and the limits' domains, the
// company's events and webhooks.
var companyServing = []string{"auth", "companies", "events", "fees", "idempotency", "limits", "outbox", "webhooks"}

// services is what pkg/function/services links: every domain and
// provider package but Stripe's receiver (pkg/issuerhooks) and library.
var services = []string{"auth", "bulk", "cards", "companies", "customers", "debts", "documents", "events", "fees", "fx",
	"idempotency", "limits", "operatorhooks", "outbox", "payments", "reconcile", "wallets", "webhooks",
	"providers", "providers/..."}

// everything is services, Stripe's receiver and Stripe's library: the
// functions that call Stripe Issuing or hear from it.
var everything = append(slices.Clip(services), "issuerhooks", "stripe-go")

var Functions = map[string]Function{
	"auth": {
		Settings: slices.Concat([]string{modeSetting, "TOKEN_TTL_SECONDS", "TOKEN_RATE_LIMIT"}, tokenSettings),
		Grants: []Grant{
			{tableResource, []string{"dynamodb:GetItem", "dynamodb:PutItem"}},
			// The one function that signs tokens (docs/auth.md).
			{tokenKeyA, []string{"kms:GetPublicKey", "kms:Sign"}},
			{tokenKeyB, []string{"kms:GetPublicKey", "kms:Sign"}},
		},
	},
	"openapi": {},
	// The company dashboard (pkg/dashboard): its sessions' records, the
	// wallets it reads, the payouts and bulk payouts it makes as the
	// payments function makes them, the activity log, the company's users
	// in the pool, the client key it rolls, the webhook endpoints it
	// manages and the delivery log it reads and resends from, the customers
	// and cards it reads and the cards it freezes and unfreezes (the card
	// issuer of the mode is told, Stripe Issuing in production mode; the
	// card transactions are listed on an index) (docs/dashboard.md).
	"dashboard": {
		// It signs people in through the pool's app client and checks
		// their tokens against the pool's published keys.
		Settings: []string{modeSetting, operatorURL, issuerURL, userPoolClient},
		Unsigned: []Grant{{userPool, []string{"cognito-idp:AssociateSoftwareToken", "cognito-idp:ConfirmForgotPassword", "cognito-idp:ForgotPassword",
			"cognito-idp:InitiateAuth", "cognito-idp:RespondToAuthChallenge", "cognito-idp:VerifySoftwareToken"}}},
		Grants: []Grant{
			// The payments function's: a form's key (idempotency), a
			// payout, a bulk batch's chunks, external_ids and payouts.
			{tableResource, []string{"dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			{payoutsQueue, sendMessage},
			{bulkQueue, sendMessage},
			{operatorToken, getSecret},
			{indexesResource, []string{"dynamodb:Query"}},
			{dashboardKey, getSecret},
			// The Team page: the company's users listed (each role's
			// group), invited, given another role and removed, each
			// read first to hold it to the company (cognitopool).
			{userPool, []string{"cognito-idp:AdminAddUserToGroup", "cognito-idp:AdminCreateUser", "cognito-idp:AdminDeleteUser",
				"cognito-idp:AdminGetUser", "cognito-idp:AdminListGroupsForUser", "cognito-idp:AdminRemoveUserFromGroup",
				"cognito-idp:ListUsersInGroup"}},
			// A resend, queued as the webhooks function queues it.
			{webhooksQueue, sendMessage},
			// The endpoints' secrets, sealed when they are made; never
			// opened (a page shows the secret it just made).
			{webhookKey, []string{"kms:GenerateDataKey"}},
			// A card frozen or unfrozen at the issuer in production mode.
			{issuerKey, getSecret},
		},
	},
	"admin": {
		Settings: []string{modeSetting, "ADMIN_CREDIT_IN_PRODUCTION", reconciliationWindow, operatorURL, issuerURL, userPoolClient},
		Grants: []Grant{
			{tableResource, []string{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			{indexesResource, []string{"dynamodb:Query"}},
			// Every change the console makes is recorded (pkg/audit), and
			// the trail read back (GET /admin/audit).
			{auditTable, []string{"dynamodb:PutItem", "dynamodb:Query"}},
			{webhooksQueue, sendMessage},
			// The console's links to customers' documents are signed with
			// the function's credentials: whoever follows one reads as it.
			{documentsBucket, []string{"s3:GetObject"}},
			{adminKeySecret, getSecret},
			// POST /admin/reconciliations reads the providers' records
			// (docs/reconciliation.md).
			{operatorToken, getSecret},
			{issuerKey, getSecret},
			// The console's signing secret, sealed when it is made.
			{webhookKey, []string{"kms:GenerateDataKey"}},
			// A company's first owner (POST /admin/companies' owner,
			// POST /admin/companies/{id}/owner): created, put in the
			// owner group, deleted again when the group cannot be given.
			{userPool, []string{"cognito-idp:AdminAddUserToGroup", "cognito-idp:AdminCreateUser", "cognito-idp:AdminDeleteUser"}},
		},
	},
	"wallets": {
		Settings: slices.Concat([]string{modeSetting}, tokenSettings, companyLimits),
		Grants: []Grant{
			{tableResource, []string{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			{indexesResource, []string{"dynamodb:Query"}},
			{webhooksQueue, sendMessage},
			{fundsQueue, sendMessage},
			tokenVerify[0], tokenVerify[1],
		},
	},
	"payments": {
		Settings: slices.Concat([]string{modeSetting, operatorURL}, tokenSettings, companyLimits),
		Grants: []Grant{
			// DeleteItem releases an Idempotency-Key (docs/idempotency.md);
			// the batch calls write a bulk batch's chunks and read its
			// external_ids and payouts (docs/bulk.md).
			{tableResource, []string{"dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			// Its events go to the payout worker with its messages
			// (payments.Relay): it never sends to the webhooks queue. A
			// bulk batch's first chunk job goes to the bulk queue.
			{payoutsQueue, sendMessage},
			{bulkQueue, sendMessage},
			tokenVerify[0], tokenVerify[1],
			{operatorToken, getSecret},
		},
	},
	"customers": {
		Settings: slices.Concat([]string{modeSetting, issuerURL}, tokenSettings, companyLimits),
		Grants: []Grant{
			{tableResource, []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			{webhooksQueue, sendMessage},
			{documentsBucket, []string{"s3:DeleteObject", "s3:GetObject", "s3:PutObject"}},
			tokenVerify[0], tokenVerify[1],
			{issuerKey, getSecret},
		},
	},
	"cards": {
		Settings: slices.Concat([]string{modeSetting, issuerURL, "REVEAL_LIMIT_PER_HOUR"}, tokenSettings, companyLimits),
		Grants: []Grant{
			{tableResource, []string{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			{indexesResource, []string{"dynamodb:Query"}},
			{webhooksQueue, sendMessage},
			{cardKey, []string{"kms:Decrypt", "kms:GenerateDataKey"}},
			tokenVerify[0], tokenVerify[1],
			{issuerKey, getSecret},
		},
	},
	"card-network": {
		Settings: slices.Concat([]string{modeSetting, "ISSUER_DECISION_DEADLINE_MS"}, tokenSettings, companyLimits),
		Grants: []Grant{
			// Query: the company's wallets, for a decline's fee the card
			// cannot pay.
			{tableResource, []string{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			{webhooksQueue, sendMessage},
			{issuerEvents, sendMessage},
			tokenVerify[0], tokenVerify[1],
			{issuerSecret, getSecret},
		},
	},
	"webhooks": {
		Settings: slices.Concat([]string{modeSetting}, tokenSettings, companyLimits),
		Grants: []Grant{
			// Writes: the company's webhook endpoints.
			{tableResource, []string{"dynamodb:ConditionCheckItem", "dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			{webhooksQueue, sendMessage},
			tokenVerify[0], tokenVerify[1],
			// The endpoints' secrets, sealed when they are made; never
			// opened (an answer shows the secret it just made).
			{webhookKey, []string{"kms:GenerateDataKey"}},
		},
	},
	"issuer-webhooks": {
		Grants: []Grant{
			{issuerEvents, sendMessage},
			{issuerSecret, getSecret},
		},
	},
	// Stripe Issuing's events (production mode): its authorization
	// requests decided as issuer-authorizations decides, the rest queued
	// as issuer-webhooks queues; the API key finds a transaction's card.
	"stripe-webhooks": {
		Settings: []string{modeSetting, issuerURL},
		Grants: []Grant{
			{tableResource, []string{"dynamodb:ConditionCheckItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			{issuerEvents, sendMessage},
			{issuerSecret, getSecret},
			{issuerKey, getSecret},
		},
	},
	"issuer-authorizations": {
		Grants: []Grant{
			// Query: the company's wallets, for a decline's fee the card
			// cannot pay.
			{tableResource, []string{"dynamodb:ConditionCheckItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			{issuerSecret, getSecret},
		},
	},
	"payout-worker": {
		Settings: []string{modeSetting, deadlineSetting, operatorURL},
		Grants: []Grant{
			// The batch calls write a bulk batch's payouts (docs/bulk.md).
			{tableResource, []string{"dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem"}},
			{payoutsQueue, sendMessage},
			// A batch's next chunk job, its items' submissions and polls.
			{bulkQueue, sendMessage},
			{webhooksQueue, sendMessage},
			{operatorToken, getSecret},
		},
	},
	"operator-callbacks": {
		Settings: []string{modeSetting, "OPERATOR_CALLBACK_PUBLIC_KEY"},
		Grants: []Grant{
			{payoutsQueue, sendMessage},
		},
	},
	"fund-worker": {
		Settings: []string{modeSetting},
		Grants: []Grant{
			{tableResource, []string{"dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			{webhooksQueue, sendMessage},
		},
	},
	"webhook-worker": {
		Grants: []Grant{
			// Query: the company's endpoints.
			{tableResource, []string{"dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			{webhooksQueue, sendMessage},
			// The endpoints' secrets, opened to sign a delivery.
			{webhookKey, []string{"kms:Decrypt"}},
		},
	},
	"card-worker": {
		Settings: []string{modeSetting},
		Grants: []Grant{
			{tableResource, []string{"dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:UpdateItem"}},
			// A card's transactions, for the settlement of a dispute the
			// issuer opened without us (a termination it applies leaves
			// the card's open holds to the sweeper).
			{indexesResource, []string{"dynamodb:Query"}},
			{webhooksQueue, sendMessage},
		},
	},
	// CodeDeploy's BeforeAllowTraffic hook: it asks the version about to
	// take traffic for its health (HealthCheckEvent) and reports to
	// CodeDeploy.
	"deploy-check": {
		Grants: []Grant{
			{deploymentGroups, []string{"codedeploy:GetDeployment", "codedeploy:PutLifecycleEventHookExecutionStatus"}},
			{stackFunctions, []string{"lambda:InvokeFunction"}},
		},
	},
	"sweeper": {
		Settings: []string{modeSetting, "CARD_HOLD_EXPIRY_SECONDS", issuerURL, reconciliationWindow, operatorURL},
		Grants: []Grant{
			// Scan: the webhook secrets stored in clear before they were
			// sealed, sealed (webhooks.SecretSealing).
			{tableResource, []string{"dynamodb:DeleteItem", "dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query", "dynamodb:Scan", "dynamodb:UpdateItem"}},
			{indexesResource, []string{"dynamodb:Query"}},
			{payoutsQueue, sendMessage},
			{bulkQueue, sendMessage}, // bulk chunk jobs and items' messages again
			{webhooksQueue, sendMessage},
			{issuerEvents, sendMessage}, // the sandbox card network's deliveries again
			{cardKey, []string{"kms:Decrypt", "kms:GenerateDataKey"}},
			{webhookKey, []string{"kms:GenerateDataKey"}}, // the webhook secrets in clear, sealed
			{issuerSecret, getSecret},
			{issuerKey, getSecret},     // issuances and terminations asked again; the issuer's statements
			{operatorToken, getSecret}, // the operator's records, for the reconciliation
		},
	},
}
