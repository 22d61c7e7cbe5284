//go:build rindafaults

package faults

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
)

// Built reports whether this is a rindafaults build.
const Built = true

var (
	enabled = parse(os.Getenv(Env))
	reached sync.Map // Fault → struct{}: said once per process
)

// parse reads RINDA_FAULTS; an unknown name stops the process (exit 2, as
// for any misuse): a misspelt switch would test nothing.
func parse(v string) map[Fault]bool {
	on := map[Fault]bool{}
	for _, name := range strings.Split(v, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(All, Fault(name)) {
			fmt.Fprintf(os.Stderr, "rindactl: %s=%q: no fault %q (known: %v)\n", Env, v, name, All)
			os.Exit(2)
		}
		on[Fault(name)] = true
	}
	return on
}

// On reports whether fault f is switched on (RINDA_FAULTS), noting the
// first time it is in the file RINDA_FAULTS_REACHED names.
func On(f Fault) bool {
	if !enabled[f] {
		return false
	}
	if _, seen := reached.LoadOrStore(f, struct{}{}); !seen {
		if path := os.Getenv(ReachedEnv); path != "" {
			if fh, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err == nil {
				_, _ = fmt.Fprintln(fh, string(f))
				_ = fh.Close()
			}
		}
	}
	return true
}
