package store

// EventPutForTest exposes eventPut to the external tests.
var EventPutForTest = eventPut
