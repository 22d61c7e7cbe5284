package sequence

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/sendcap"
)

type rampFile struct {
	Start int    `yaml:"start"`
	Step  int    `yaml:"step"`
	Every string `yaml:"every"`
	Max   int    `yaml:"max"`
}

var rampFields = &fieldSet{keys: []string{"start", "step", "every", "max"}}

// validate returns the file's warm-up ramp (sendcap.Ramp), nil without one.
func (f *rampFile) validate(path string) (*sendcap.Ramp, error) {
	if f == nil {
		return nil, nil
	}
	r := &sendcap.Ramp{Start: f.Start, Step: f.Step, Max: f.Max}
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
