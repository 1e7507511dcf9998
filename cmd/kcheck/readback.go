package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/kcheck/kcheck/tracer"
	"github.com/kcheck/kcheck/tracer/readback"
)

const readbackDescription = `Ends a trace that has no read-back (kcheck proxy --readback=false, or a run
whose read-back could not reach the cluster) with one: reads the trace's topic
back from the cluster, every partition from offset 0 to its high watermark,
and appends a ReadBack event per partition, so that "kcheck verify TRACE" can
tell lost and duplicated records. It first waits (up to 60 s) for the cluster
to settle: every partition's leader the same in two metadata reads, every
replica in sync; it fetches at the leader's epoch and follows a moving
leader; and it reads a partition until its high watermark is the same in two
reads and passes the highest offset the trace acknowledged on it. A high
watermark still short of that after 60 s is recorded (ReadBackShort) and
becomes the evidence of the lost-write verify reports. The trace is checked first; it is rewritten
in place (or written to --out) through a temporary file, never half written.
A trace that already has a read-back is refused.`

// readbackCommand returns the "kcheck readback" command.
func readbackCommand() *cli.Command {
	return &cli.Command{
		Name:        "readback",
		Usage:       "end a trace with the read-back of its topic",
		UsageText:   "kcheck readback --bootstrap HOST:PORT [--out FILE] TRACE",
		Description: readbackDescription,
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "bootstrap", Aliases: []string{"brokers"}, Usage: "a broker of the cluster the trace's topic is on, `HOST:PORT` (required; repeatable; --brokers is the same)"},
			&cli.StringFlag{Name: "out", Usage: "write the trace with its read-back to `FILE` instead of rewriting TRACE", TakesFile: true},
			&cli.DurationFlag{Name: "timeout", Value: 5 * time.Minute, Usage: "give up reading back after `DURATION`"},
		},
		Action: doReadback,
	}
}

func doReadback(c *cli.Context) error {
	if c.NArg() != 1 {
		return usageErrorf("readback: want one TRACE, got %d arguments (see kcheck readback --help)", c.NArg())
	}
	path := c.Args().First()
	brokers := listFlag(c, "bootstrap")
	if len(brokers) == 0 {
		return usageErrorf("readback: --bootstrap HOST:PORT is required")
	}
	out := c.String("out")
	if out == "" {
		out = path
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return usageErrorf("readback: %v", err)
	}
	ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
	defer cancel()
	full, n, err := readback.Append(ctx, data, path, brokers)
	if err != nil {
		var se *tracer.SyntaxError
		if errors.As(err, &se) || errors.Is(err, readback.ErrHasReadBack) {
			return usageErrorf("%v", err)
		}
		return usageErrorf("readback %s: %v", path, err)
	}
	if err := writeFileAtomic(out, func(w io.Writer) error { _, err := w.Write(full); return err }); err != nil {
		return usageErrorf("readback: writing %s: %v", out, err)
	}
	fmt.Fprintf(c.App.ErrWriter, "kcheck readback: %d partitions read back into %s\n", n, out)
	return nil
}
