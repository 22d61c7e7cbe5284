// Package docs holds the tests of the documentation itself: what a
// newcomer reads stays short enough to read, and its links lead somewhere.
package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// benchmarksMaxLines bounds docs/benchmarks.md (issue 41): the current
// figures and how to reproduce them; dated runs go to bench/results/.
const benchmarksMaxLines = 300

func TestBenchmarksPageStaysShort(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("benchmarks.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > benchmarksMaxLines {
		t.Errorf("docs/benchmarks.md has %d lines, more than %d: move dated runs to bench/results/<date>-<topic>.md (one file per run) and keep only each figure's current value, date, load and command", n, benchmarksMaxLines)
	}
}

var (
	mdLink    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *$`)
	fence     = regexp.MustCompile("(?ms)^```.*?^```")
)

// TestDocLinksResolve checks every relative link of README.md, docs/ and
// the run logs of bench/results/: the file exists and, for a #fragment
// into a Markdown file, a heading of that file has that anchor (GitHub's
// rule). Moving a section or a run log cannot leave a link behind.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	var files []string
	for _, g := range []string{"../README.md", "*.md", "../bench/results/*.md"} {
		m, err := filepath.Glob(g)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			resolved := f
			if path != "" {
				resolved = filepath.Join(filepath.Dir(f), path)
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s: link %q: %v", f, target, err)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			if anchors[resolved] == nil {
				anchors[resolved] = headingAnchors(t, resolved)
			}
			if !anchors[resolved][frag] {
				t.Errorf("%s: link %q: no heading with anchor #%s in %s", f, target, frag, resolved)
			}
		}
	}
}

// headingAnchors returns the anchors GitHub gives a file's headings:
// lower case, punctuation but '-' and '_' dropped, spaces as '-', and a
// repeated anchor numbered -1, -2, ...
func headingAnchors(t *testing.T, path string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(fence.ReplaceAllString(string(b), ""), -1) {
		var a strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				a.WriteRune('-')
			case r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r > 127 && !strings.ContainsRune("–—’“”…·×→≤≥µ", r):
				a.WriteRune(r)
			}
		}
		anchor := a.String()
		for i := 1; out[anchor]; i++ {
			anchor = a.String() + "-" + strconv.Itoa(i)
		}
		out[anchor] = true
	}
	return out
}
