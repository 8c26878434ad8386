package queue

// DelaySecondsForTest exposes delaySeconds to the external tests.
var DelaySecondsForTest = delaySeconds
