// Command slowtests lists the slowest tests of a `go test -json` run read
// from stdin: top-level tests by elapsed time, then the packages by theirs.
// scripts/slowest-tests.sh runs the suite into it.
package main

import (
	"bufio"
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

// event is the part of a test2json event read here.
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
}

type timing struct {
	pkg, test string
	seconds   float64
	failed    bool
}

func main() {
	n := flag.Int("n", 20, "how many tests to list")
	flag.Parse()
	var tests, pkgs []timing
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || (e.Action != "pass" && e.Action != "fail") {
			continue // build output and lines that are not events
		}
		t := timing{pkg: e.Package, test: e.Test, seconds: e.Elapsed, failed: e.Action == "fail"}
		switch {
		case e.Test == "":
			pkgs = append(pkgs, t)
		case !strings.Contains(e.Test, "/"): // subtests count in their parent
			tests = append(tests, t)
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(os.Stderr, "slowtests:", err)
		os.Exit(1)
	}
	byTime := func(a, b timing) int { return cmp.Compare(b.seconds, a.seconds) }
	slices.SortFunc(tests, byTime)
	slices.SortFunc(pkgs, byTime)
	fmt.Printf("%d slowest of %d tests (seconds; parallel tests overlap, so these do not add up to the wall time):\n", min(*n, len(tests)), len(tests))
	for _, t := range tests[:min(*n, len(tests))] {
		fmt.Printf("%8.2f  %s  %s%s\n", t.seconds, strings.TrimPrefix(t.pkg, "github.com/rindactl/rindactl/"), t.test, failed(t))
	}
	fmt.Printf("\n%d slowest of %d packages (seconds; packages run in parallel too):\n", min(10, len(pkgs)), len(pkgs))
	for _, p := range pkgs[:min(10, len(pkgs))] {
		fmt.Printf("%8.2f  %s%s\n", p.seconds, strings.TrimPrefix(p.pkg, "github.com/rindactl/rindactl/"), failed(p))
	}
}

func failed(t timing) string {
	if t.failed {
		return "  (FAILED)"
	}
	return ""
}
