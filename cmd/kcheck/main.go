// Kcheck model-checks the TLA+ specification of the Kafka idempotent producer
// and validates producer traces against it.
//
// Usage:
//
//	kcheck <command> [flags]
//
// Run kcheck --help for the list of commands, and kcheck <command> --help for
// the flags of one.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runWithStdin(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
