package sequence

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Ramp is a new mailbox's warm-up: its daily cap starts at Start and grows
// by Step every Every up to Max. Growth waits a period after a bounce or a
// pause (the store decides, see email_ramp_grow.sql).
type Ramp struct {
	Start int
	Step  int
	Every time.Duration
	Max   int
}

type rampFile struct {
	Start int    `yaml:"start"`
	Step  int    `yaml:"step"`
	Every string `yaml:"every"`
	Max   int    `yaml:"max"`
}

var rampFields = &fieldSet{keys: []string{"start", "step", "every", "max"}}

func (f *rampFile) validate(path string) (*Ramp, error) {
	if f == nil {
		return nil, nil
	}
	r := &Ramp{Start: f.Start, Step: f.Step, Max: f.Max}
	switch {
	case f.Start < 1:
		return nil, fmt.Errorf("%s.start: %d must be at least 1 (messages on the first day)", path, f.Start)
	case f.Step < 0:
		return nil, fmt.Errorf("%s.step: %d is negative", path, f.Step)
	case f.Max < f.Start:
		return nil, fmt.Errorf("%s.max: %d is below start %d; set the cap the ramp grows to", path, f.Max, f.Start)
	}
	every, err := parseDays(f.Every)
	if err != nil || every < time.Hour {
		return nil, fmt.Errorf("%s.every: %q is not a period of at least an hour (use 1d, 2d or a Go duration such as 12h)", path, f.Every)
	}
	r.Every = every
	return r, nil
}

func (r *Ramp) file() *rampFile {
	if r == nil {
		return nil
	}
	return &rampFile{Start: r.Start, Step: r.Step, Every: formatDays(r.Every), Max: r.Max}
}

// parseDays reads "3d" as 72h, and anything else as a Go duration.
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		days, err := strconv.Atoi(n)
		if err != nil || days < 0 {
			return 0, errors.New("invalid days")
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	return time.ParseDuration(s)
}

func formatDays(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + "d"
	}
	return d.String()
}
