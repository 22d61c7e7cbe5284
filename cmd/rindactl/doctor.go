package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/cliio"
	"github.com/rindactl/rindactl/internal/store"
)

// DoctorOptions holds the flags and clients of `rindactl doctor`.
type DoctorOptions struct {
	f      *Factory
	Output string
}

// providerNames are the providers whose keys doctor reports.
var providerNames = []string{"HUNTER", "FINDYMAIL", "MILLIONVERIFIER"}

func newCmdDoctor(f *Factory, runF func(context.Context, *DoctorOptions) error) *cobra.Command {
	opts := &DoctorOptions{f: f}
	cmd := &cobra.Command{
		Use:   "doctor",
		Short: "Check the database, the schema and provider configuration",
		Long: `Check that the database is reachable and fully migrated, and report
which providers have an API key configured (never the keys themselves).
Exits 1 with one line per problem.`,
		Example: `  rindactl doctor
  rindactl doctor --output json`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return doctorRun(cmd.Context(), opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "text", "output format: text or json")
	return cmd
}

type doctorReport struct {
	OK        bool            `json:"ok"`
	Checks    []string        `json:"checks"`
	Problems  []string        `json:"problems"`
	Providers map[string]bool `json:"providers_configured"`
}

func doctorRun(ctx context.Context, opts *DoctorOptions) error {
	format, err := cliio.ParseFormat(opts.Output, cliio.FormatText, cliio.FormatJSON)
	if err != nil {
		return usageError("%v", err)
	}
	rep := doctorReport{Checks: []string{}, Problems: []string{}, Providers: map[string]bool{}}

	pool, err := opts.f.OpenDB(ctx)
	if err != nil {
		rep.Problems = append(rep.Problems, "database: "+err.Error())
	} else {
		defer pool.Close()
		rep.Checks = append(rep.Checks, "database reachable")
		pending, err := store.Pending(ctx, pool)
		switch {
		case err != nil:
			rep.Problems = append(rep.Problems, "schema: "+err.Error())
		case pending > 0:
			rep.Problems = append(rep.Problems, fmt.Sprintf("schema: %d migration(s) pending; run 'rindactl migrate'", pending))
		default:
			rep.Checks = append(rep.Checks, "schema up to date")
		}
	}

	for _, p := range providerNames {
		rep.Providers[p] = opts.f.Getenv("RINDA_"+p+"_API_KEY") != ""
	}
	rep.OK = len(rep.Problems) == 0

	ios := opts.f.IO
	if format == cliio.FormatJSON {
		if err := ios.WriteJSON(rep); err != nil {
			return err
		}
	} else {
		for _, c := range rep.Checks {
			fmt.Fprintln(ios.Out, "ok       "+c)
		}
		for _, p := range providerNames {
			state := "no key (RINDA_" + p + "_API_KEY unset)"
			if rep.Providers[p] {
				state = "key configured"
			}
			fmt.Fprintf(ios.Out, "provider %-16s %s\n", p, state)
		}
		for _, p := range rep.Problems {
			fmt.Fprintln(ios.ErrOut, "problem  "+p)
		}
	}
	if !rep.OK {
		return &silentError{code: exitError}
	}
	return nil
}
