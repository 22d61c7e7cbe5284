package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"github.com/rindactl/rindactl/internal/status"
)

// Watch defaults: a redraw every two seconds reads a few indexed queries.
const (
	statusIntervalDefault = 2 * time.Second
	statusIntervalMin     = 500 * time.Millisecond
)

// On a terminal each frame replaces the last: cursor home, clear below.
const redrawInPlace = "\x1b[H\x1b[J"

// statusWatch redraws the status every opts.Interval until Ctrl-C (or
// SIGTERM: main cancels ctx on both), then exits 0. Not on a terminal,
// frames follow one another, plain and separated by a blank line, for logs
// and pipes.
func statusWatch(ctx context.Context, opts *StatusOptions, filter status.Filter) error {
	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		return err
	}
	defer pool.Close()
	out, tty := opts.f.IO.Out, opts.f.IO.IsStdoutTTY()
	for first := true; ; first = false {
		frame, err := status.BuildWatchFrame(ctx, pool, opts.f.Now(), filter, opts.Interval)
		var filterErr *status.FilterError
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.As(err, &filterErr):
			return usageError("%v", err)
		case err != nil:
			return err
		}
		var buf bytes.Buffer
		switch {
		case tty:
			buf.WriteString(redrawInPlace)
		case !first:
			buf.WriteString("\n")
		}
		if err := status.WriteWatch(&buf, frame); err != nil {
			return err
		}
		// One write per frame: a terminal never shows half a redraw.
		if _, err := io.Copy(out, &buf); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(opts.Interval):
		}
	}
}
