// Package local is the local stack: the emulators (stack), the dev server
// that runs the Lambda handlers like AWS does (devserver), the bootstraps
// run under AWS's Runtime Interface Emulator (rie), the template reader
// (samtemplate), the local CA (localca), the watch of a recipe's make
// (makewatch) and the commands that drive them (cmd/devstack, cmd/invoke,
// cmd/listen, cmd/samenv). See docs/local.md.
//
// Its own tests run every sample event under events/ through its function's
// handler.
package local
