package main

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/schedule"
)

// specOff leaves a tick out of the generated units or the run.
const specOff = "off"

func newCmdSchedule(f *Factory) *cobra.Command {
	return groupCommand("schedule", "Print crontab, systemd or Kubernetes units that run the ticks",
		"Generate deployment units for the ticks from cron specs.",
		newCmdSchedulePrint(f, nil))
}

// SchedulePrintOptions holds the flags of `rindactl schedule print`.
type SchedulePrintOptions struct {
	f       *Factory
	Format  string
	Enrich  string
	Email   string
	Events  string
	Inbox   string
	EnvFile string
	Binary  string
	User    string
	Image   string
}

func newCmdSchedulePrint(f *Factory, runF func(context.Context, *SchedulePrintOptions) error) *cobra.Command {
	opts := &SchedulePrintOptions{f: f}
	cmd := &cobra.Command{
		Use:   "print --format crontab|systemd|kubernetes",
		Short: "Print units for --format crontab|systemd|kubernetes",
		Long: `Print ready-to-install units that run "rindactl enrich tick", "rindactl email
tick", "rindactl events deliver" and "rindactl inbox tick" on cron specs (five
fields; default every minute; "off" leaves a tick out). Each tick gets a --max-duration below its
interval so it ends before its next firing.

  crontab     crontab lines that load --env-file and log to the journal
  systemd     a hardened oneshot .service and a .timer per tick; OnCalendar=
              is translated from the cron spec; enrichment runs at a lower
              CPU and IO priority so email keeps its pace
  kubernetes  a CronJob per tick with its environment from a Secret

Overlapping ticks are safe: rows are claimed with FOR UPDATE SKIP LOCKED and
a lease. A spec that is invalid, or that systemd cannot express, exits 2.`,
		Example: `  rindactl schedule print --format crontab | crontab -u rindactl -
  rindactl schedule print --format systemd --enrich '*/2 * * * *' --events off
  rindactl schedule print --format kubernetes > rindactl-cronjobs.yaml`,
		Args: exactArgs(0, "none"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(cmd.Context(), opts)
			}
			return schedulePrintRun(cmd.Context(), opts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&opts.Format, "format", "", "unit format: crontab, systemd or kubernetes (required)")
	fl.StringVar(&opts.Enrich, "enrich", schedule.SpecDefault, `cron spec for "enrich tick", or off`)
	fl.StringVar(&opts.Email, "email", schedule.SpecDefault, `cron spec for "email tick", or off`)
	fl.StringVar(&opts.Events, "events", schedule.SpecDefault, `cron spec for "events deliver", or off`)
	fl.StringVar(&opts.Inbox, "inbox", schedule.SpecDefault, `cron spec for "inbox tick", or off`)
	fl.StringVar(&opts.EnvFile, "env-file", schedule.EnvFileDefault, "KEY=value file with DATABASE_URL and provider keys (crontab, systemd)")
	fl.StringVar(&opts.Binary, "binary", schedule.BinaryDefault, "absolute path of rindactl on the host (crontab, systemd)")
	fl.StringVar(&opts.User, "user", "", "user the systemd units run as (default: DynamicUser=yes)")
	fl.StringVar(&opts.Image, "image", schedule.ImageDefault, "container image (kubernetes)")
	return cmd
}

func schedulePrintRun(_ context.Context, opts *SchedulePrintOptions) error {
	if opts.Format == "" {
		return usageError("--format is required: crontab, systemd or kubernetes")
	}
	format, err := schedule.ParseFormat(opts.Format)
	if err != nil {
		return usageError("--%v", err)
	}
	ticks, err := parseTicks(tickSpecs{opts.Enrich, opts.Email, opts.Events, opts.Inbox}, schedule.Parse)
	if err != nil {
		return err
	}
	files, err := schedule.Render(format, schedule.Plan{
		Ticks: ticks, Binary: opts.Binary, EnvFile: opts.EnvFile, User: opts.User, Image: opts.Image,
	})
	if err != nil {
		// Render only rejects its input: a value the format cannot carry.
		return usageError("%v", err)
	}
	out := opts.f.IO.Out
	for i, file := range files {
		if i > 0 {
			fmt.Fprintln(out)
		}
		fmt.Fprint(out, file.Content)
	}
	return nil
}

// tickSpecs are the --enrich, --email, --events and --inbox values.
type tickSpecs struct{ enrich, email, events, inbox string }

// parseTicks turns the tick flags' values into ticks, leaving out the ones
// set to "off". A bad spec is a usage error naming its flag.
func parseTicks(specs tickSpecs, parse func(string) (schedule.Spec, error)) ([]schedule.Tick, error) {
	var ticks []schedule.Tick
	for _, flag := range []struct {
		kind schedule.Kind
		text string
	}{{schedule.KindEnrich, specs.enrich}, {schedule.KindEmail, specs.email}, {schedule.KindEvents, specs.events}, {schedule.KindInbox, specs.inbox}} {
		if flag.text == specOff {
			continue
		}
		spec, err := parse(flag.text)
		if err != nil {
			return nil, usageError("--%s: %v", flag.kind, err)
		}
		ticks = append(ticks, schedule.Tick{Kind: flag.kind, Spec: spec})
	}
	if len(ticks) == 0 {
		return nil, usageError("every tick is off: give a cron spec to --enrich, --email, --events or --inbox")
	}
	return ticks, nil
}
