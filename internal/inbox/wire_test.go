package inbox

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/emersion/go-imap/v2"
)

// small caps, so the fuzzer and the tests reach them.
var testWireLimits = wireLimits{lineMax: 64, literalMax: 32, commandBytesMax: 512, responsesMax: 8}

func TestWireMeterCaps(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, stream, what string
	}{
		{"a literal within its cap, its bytes not a line", "* 1 FETCH (BODY[] {30}\r\n" + strings.Repeat("\n", 30) + ")\r\n", ""},
		{"a LITERAL+ literal within its cap", "* 1 FETCH (BODY[] {3+}\r\nabc)\r\n", ""},
		{"an endless literal", "* 1 FETCH (UID 1 BODY[]<0> {4294967295}\r\nxxxx", "a literal"},
		{"a literal of 10^40 bytes", "* 1 FETCH (BODY[] {" + strings.Repeat("9", 40) + "}\r\n", "a literal"},
		{"an endless line", "* OK " + strings.Repeat("a", 100), "a line"},
		{"endless responses", strings.Repeat("* 1 FETCH (FLAGS ())\r\n", 9), "responses to one command"},
		{"an endless answer of literals", strings.Repeat("* 1 FETCH (BODY[] {30}\r\n"+strings.Repeat("x", 30)+"\r\n", 2) + strings.Repeat("{30}\r\n"+strings.Repeat("x", 30), 20), "the answer to one command"},
	}
	for _, c := range cases {
		m := wireMeter{lim: testWireLimits}
		err := m.feed([]byte(c.stream))
		var we *WireError
		switch {
		case c.what == "" && err != nil:
			t.Errorf("%s: %v, want no cap passed", c.name, err)
		case c.what != "" && (!errors.As(err, &we) || we.What != c.what):
			t.Errorf("%s: %v, want %s over its cap", c.name, err, c.what)
		}
	}
}

// The answer to each command is counted from zero: a long session of
// small answers passes no cap.
func TestWireMeterCountsPerCommand(t *testing.T) {
	t.Parallel()
	m := wireMeter{lim: testWireLimits}
	for range 100 {
		m.commandSent()
		if err := m.feed([]byte("* 1 FETCH (FLAGS ())\r\nA1 OK done\r\n")); err != nil {
			t.Fatal(err)
		}
	}
}

// FuzzWireMeter: whatever a server sends, cut into reads however the
// network cuts it, the meter passes or fails it the same way, and never
// lets a line, a literal or an answer past its cap.
func FuzzWireMeter(f *testing.F) {
	f.Add([]byte("* OK [CAPABILITY IMAP4rev1] ready\r\n"), uint8(3))
	f.Add([]byte("* 1 FETCH (UID 1 BODY[]<0> {5}\r\nhello)\r\nA1 OK done\r\n"), uint8(7))
	f.Add([]byte("* 1 FETCH (UID 1 BODY[]<0> {4294967295}\r\nxxxxxxxx"), uint8(1))
	f.Add([]byte("* SEARCH 1 2 4294967295\r\nA1 OK done\r\n"), uint8(2))
	f.Add([]byte("* 1 FETCH (BODY[] ~{3+}\r\n\x00\r\n)\r\n{2}\r\n{1}\r\n"), uint8(5))
	f.Add([]byte(strings.Repeat("* 1 FETCH (FLAGS ())\r\n", 10)), uint8(11))
	f.Fuzz(func(t *testing.T, stream []byte, cut uint8) {
		whole := wireMeter{lim: testWireLimits}
		wantErr := whole.feed(stream)
		pieces := wireMeter{lim: testWireLimits}
		var gotErr error
		step := int(cut)%17 + 1
		for rest := stream; len(rest) > 0 && gotErr == nil; {
			n := min(step, len(rest))
			gotErr = pieces.feed(rest[:n])
			rest = rest[n:]
		}
		if (wantErr == nil) != (gotErr == nil) || (wantErr != nil && wantErr.Error() != gotErr.Error()) {
			t.Fatalf("fed whole: %v; fed in pieces of %d: %v", wantErr, step, gotErr)
		}
		if wantErr != nil {
			return
		}
		if whole.line > testWireLimits.lineMax || whole.literal > testWireLimits.literalMax ||
			whole.command > testWireLimits.commandBytesMax || whole.responses > testWireLimits.responsesMax {
			t.Fatalf("past a cap without an error: %+v", whole)
		}
	})
}

// A UID range may end at the largest UID or span 2^32 UIDs: the plan
// takes at most a batch, above the checkpoint, once each.
func TestPlanReadNeverExpandsARange(t *testing.T) {
	t.Parallel()
	wrap := []imap.UIDRange{{Start: 1, Stop: 2}, {Start: math.MaxUint32, Stop: math.MaxUint32}}
	if p := planRead(wrap, 0, 200); !slices.Equal(p.backlog, []uint32{1, 2, math.MaxUint32}) || p.ahead != nil {
		t.Errorf("1:2,4294967295 = %+v", p)
	}
	huge := []imap.UIDRange{{Start: 1, Stop: math.MaxUint32}}
	p := planRead(huge, 10, 200)
	if len(p.backlog) != 100 || p.backlog[0] != 11 || len(p.ahead) != 100 || p.ahead[0] != math.MaxUint32 {
		t.Errorf("1:4294967295 above 10 = backlog %d from %d, ahead %d", len(p.backlog), p.backlog[0], len(p.ahead))
	}
}

// FuzzPlanRead: any set of ranges a server may send gives a plan of at
// most a batch of distinct UIDs above the checkpoint, the backlog
// ascending from the lowest, the ahead window above it.
func FuzzPlanRead(f *testing.F) {
	f.Add([]byte{0, 0, 0, 1, 0, 0, 0, 2, 255, 255, 255, 255, 255, 255, 255, 255}, uint32(0), uint8(200))
	f.Add([]byte{0, 0, 0, 1, 255, 255, 255, 255}, uint32(7), uint8(10))
	f.Add([]byte{0, 0, 0, 9, 0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 0, 0}, uint32(4), uint8(3))
	f.Fuzz(func(t *testing.T, raw []byte, last uint32, batch uint8) {
		var ranges []imap.UIDRange
		for ; len(raw) >= 8; raw = raw[8:] {
			u := func(b []byte) imap.UID {
				return imap.UID(uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3]))
			}
			ranges = append(ranges, imap.UIDRange{Start: u(raw), Stop: u(raw[4:])})
		}
		p := planRead(ranges, last, int(batch))
		all := append(slices.Clone(p.backlog), p.ahead...)
		if len(all) > int(batch) {
			t.Fatalf("%d UIDs for a batch of %d", len(all), batch)
		}
		seen := map[uint32]bool{}
		for _, u := range all {
			if u <= last || seen[u] {
				t.Fatalf("UID %d: at or below the checkpoint %d, or twice", u, last)
			}
			seen[u] = true
		}
		if !slices.IsSorted(p.backlog) {
			t.Fatalf("backlog not ascending: %v", p.backlog)
		}
		if len(p.ahead) > 0 && len(p.backlog) > 0 && p.ahead[len(p.ahead)-1] <= p.backlog[len(p.backlog)-1] {
			t.Fatalf("ahead %v not above backlog %v", p.ahead, p.backlog)
		}
	})
}
