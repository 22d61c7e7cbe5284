package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// pipelineFiles are the email tick's pipeline files that docs/architecture.md
// ("The email tick's pipeline") counts channels and mutexes in.
var pipelineFiles = []string{
	"internal/sequence/tick.go", "internal/sequence/dispatch.go", "internal/sequence/lanes.go",
	"internal/sequence/sending_recorder.go", "internal/sequence/send.go", "internal/sequence/settle.go",
	"internal/sequence/bounce_guard.go", "internal/sequence/timing.go", "internal/tick/batcher.go",
}

var (
	pipelineChannels = regexp.MustCompile("\\*\\*Channels: (\\d+) `make\\(chan` sites\\*\\*")
	pipelineMutexes  = regexp.MustCompile(`\*\*Mutexes: (\d+)\*\*`)
	makeChan         = regexp.MustCompile(`make\(chan\b`)
	mutexDecl        = regexp.MustCompile(`(?m)^\s*\w+\s+sync\.(RW)?Mutex\b`)
)

// TestDocsEmailPipelineCounts fails when the pipeline's code gains or loses
// a channel or a mutex and the architecture page still states the old count.
func TestDocsEmailPipelineCounts(t *testing.T) {
	t.Parallel()
	page, err := os.ReadFile("architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	var chans, mutexes int
	for _, f := range pipelineFiles {
		src, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		chans += len(makeChan.FindAll(src, -1))
		mutexes += len(mutexDecl.FindAll(src, -1))
	}
	for _, c := range []struct {
		what string
		re   *regexp.Regexp
		code int
	}{{"channels", pipelineChannels, chans}, {"mutexes", pipelineMutexes, mutexes}} {
		m := c.re.FindSubmatch(page)
		if m == nil {
			t.Errorf("docs/architecture.md states no count of the email pipeline's %s (%s)", c.what, c.re)
			continue
		}
		if n, _ := strconv.Atoi(string(m[1])); n != c.code {
			t.Errorf("docs/architecture.md says the email pipeline has %d %s; the code has %d: update \"The email tick's pipeline\"", n, c.what, c.code)
		}
	}
}
