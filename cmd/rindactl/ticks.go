package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/rindactl/rindactl/internal/tick"
	"github.com/rindactl/rindactl/internal/tickkind"
)

// tickKinds registers every tick kind: one line each, naming the kind's
// own part (its file: flags of its own, its work, its report). The frame
// (tick_frame.go) builds its command, and addTickCommands puts it at
// `rindactl <kind.Args()>`, under the group command of that name when the
// path has two words. TestTickRegistry checks it against tickkind.All.
var tickKinds = []func() tickCommand{
	enrichTick,
	emailTick,
	eventsTick,
	inboxTick,
	pruneTick,
}

// addTickCommands adds every registered tick kind's command to root.
func addTickCommands(root *cobra.Command, f *Factory) {
	for _, newKind := range tickKinds {
		k := newKind()
		path := k.Kind().Args()
		parent := root
		for _, name := range path[:len(path)-1] {
			parent = subcommand(parent, name)
		}
		parent.AddCommand(k.Command(f))
	}
}

// subcommand is parent's subcommand name; a registered tick whose group
// is missing is a programming error.
func subcommand(parent *cobra.Command, name string) *cobra.Command {
	for _, c := range parent.Commands() {
		if c.Name() == name {
			return c
		}
	}
	panic(fmt.Sprintf("tick registry: no command %q under %q", name, parent.CommandPath()))
}

// tickGrace is how long a tick of kind may hold a row past its
// --max-duration with default settings (enrich: the default provider HTTP
// timeout; its tick sizes its lease from the configured ones).
func tickGrace(kind tickkind.Kind) tick.Grace {
	for _, newKind := range tickKinds {
		if k := newKind(); k.Kind() == kind {
			return k.Grace()
		}
	}
	return tick.Grace{What: "no grace"}
}

// longestLeaseDefault is the longest default --lease of the tick kinds:
// a run unfinished after it has crashed.
func longestLeaseDefault() time.Duration {
	var longest time.Duration
	for _, newKind := range tickKinds {
		if l := newKind().Bounds().Lease; l != nil {
			longest = max(longest, l.Default)
		}
	}
	return longest
}
