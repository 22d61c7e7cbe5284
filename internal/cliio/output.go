package cliio

import "fmt"

// Format is a read command's --output value.
type Format string

const (
	FormatText  Format = "text"
	FormatTable Format = "table"
	FormatJSON  Format = "json"
)

// ParseFormat accepts one of allowed; the error names the flag and the
// choices.
func ParseFormat(v string, allowed ...Format) (Format, error) {
	for _, a := range allowed {
		if Format(v) == a {
			return a, nil
		}
	}
	return "", fmt.Errorf("invalid --output %q: use one of %v", v, allowed)
}
