// Command rindapeers runs the peers `make bench` compares rindactl with
// that need code the product must not depend on: River
// (github.com/riverqueue/river), and the summary of interleaved pairs.
// It is its own module so the product's go.mod never requires River.
//
//	rindapeers river --jobs 200000 --workers 4
//	printf '0.8 1\n0.9 1\n' | rindapeers pairs
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rindactl/rindactl/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

const usage = `usage:
  rindapeers river --jobs N [--workers C]   time River working N no-op jobs (DATABASE_URL)
  rindapeers pairs                          median/min/max of "subject reference" lines on stdin`

// run returns the exit code: 2 for bad usage or input, 1 for a failed run.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, usage)
		return 2
	}
	switch args[0] {
	case "river":
		return riverCmd(ctx, args[1:], stdout, stderr)
	case "pairs":
		return pairsCmd(stdin, stdout, stderr)
	default:
		fmt.Fprintf(stderr, "rindapeers: unknown command %q\n%s\n", args[0], usage)
		return 2
	}
}

func riverCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("river", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfg := riverConfig{URL: os.Getenv("DATABASE_URL")}
	fs.IntVar(&cfg.Jobs, "jobs", 0, "no-op jobs to insert and work (required)")
	fs.IntVar(&cfg.Workers, "workers", bench.ClaimConcurrencyDefault, "River workers (the queue's MaxWorkers)")
	fs.DurationVar(&cfg.FetchCooldown, "fetch-cooldown", defaultFetchCooldown, "River's FetchCooldown")
	fs.DurationVar(&cfg.FetchPollInterval, "fetch-poll-interval", defaultFetchPollInterval, "River's FetchPollInterval")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	switch {
	case cfg.Jobs < 1:
		fmt.Fprintln(stderr, "rindapeers river: --jobs is required: the number of jobs to work, e.g. --jobs 200000")
		return 2
	case cfg.Workers < 1 || cfg.Workers > 10000:
		fmt.Fprintf(stderr, "rindapeers river: invalid --workers %d: use 1 to 10000\n", cfg.Workers)
		return 2
	case cfg.FetchCooldown < time.Millisecond || cfg.FetchPollInterval < cfg.FetchCooldown:
		fmt.Fprintln(stderr, "rindapeers river: --fetch-cooldown must be at least 1ms and --fetch-poll-interval at least the cooldown")
		return 2
	case cfg.URL == "":
		fmt.Fprintln(stderr, "rindapeers river: DATABASE_URL is not set: export it, or run under scripts/pg run --")
		return 2
	}
	res, err := runRiver(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "rindapeers river: %v\n", err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		return 1
	}
	return 0
}

// pairsCmd reads one pair per line, "subject reference" (two numbers), and
// prints the summary as JSON.
func pairsCmd(stdin io.Reader, stdout, stderr io.Writer) int {
	var sub, ref []float64
	sc := bufio.NewScanner(stdin)
	for line := 1; sc.Scan(); line++ {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		if len(f) != 2 {
			fmt.Fprintf(stderr, "rindapeers pairs: line %d: %q: want two numbers, \"subject reference\"\n", line, sc.Text())
			return 2
		}
		s, err1 := strconv.ParseFloat(f[0], 64)
		r, err2 := strconv.ParseFloat(f[1], 64)
		if err1 != nil || err2 != nil {
			fmt.Fprintf(stderr, "rindapeers pairs: line %d: %q: want two numbers, \"subject reference\"\n", line, sc.Text())
			return 2
		}
		sub, ref = append(sub, s), append(ref, r)
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(stderr, "rindapeers pairs: reading stdin: %v\n", err)
		return 1
	}
	s, err := bench.SummarizePairs(sub, ref)
	if err != nil {
		fmt.Fprintf(stderr, "rindapeers %v\n", err)
		return 2
	}
	if err := json.NewEncoder(stdout).Encode(s); err != nil {
		return 1
	}
	return 0
}
