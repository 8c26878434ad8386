package webhookshttp

import (
	"fmt"
	"net/http"

	"payments/pkg/events"
	"payments/pkg/httpapi"
	"payments/pkg/webhooks"
)

// Errors are the answers to the errors of packages events and webhooks: the rows of the catalogue
// of every function that links them (function.Catalogue joins them).
var Errors = httpapi.Catalogue{
	{Err: events.ErrNotFound, Status: http.StatusNotFound, Code: "EVENT_NOT_FOUND", Message: "event not found"},
	{Err: webhooks.ErrNoDestination, Status: http.StatusConflict, Code: "NO_WEBHOOK_DESTINATION", Message: "event has no destination: no enabled webhook endpoint takes its kind"},
	{Err: webhooks.ErrEndpointNotFound, Status: http.StatusNotFound, Code: "WEBHOOK_ENDPOINT_NOT_FOUND", Message: "webhook endpoint not found"},
	{Err: webhooks.ErrTooManyEndpoints, Status: http.StatusBadRequest, Code: "TOO_MANY_WEBHOOK_ENDPOINTS", Message: fmt.Sprintf("a company may have at most %d webhook endpoints: delete one first", webhooks.MaxEndpoints)},
}
