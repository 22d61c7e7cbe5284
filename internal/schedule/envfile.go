package schedule

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// The env file (EnvFileDefault) is read by two parsers: the crontab lines
// source it with `sh` (set -a; . FILE) and systemd reads it as
// EnvironmentFile=. They agree only on a subset, which is the one format
// rindactl writes and accepts:
//
//	# comment
//	KEY="value"     \ " $ and ` escaped with a backslash (both parsers
//	                unescape exactly these inside double quotes)
//	KEY='value'     no ' inside; taken literally by both
//	KEY=value       only letters, digits and _ . / : @ % + , = ? -
//
// Anything else (an unquoted & or space, export, text after a closing quote,
// CRLF line ends) is read differently by the two, so it is rejected.

var (
	envKey      = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	envBare     = regexp.MustCompile(`^[A-Za-z0-9_./:@%+,=?-]*$`)
	envEscaper  = strings.NewReplacer(`\`, `\\`, `"`, `\"`, `$`, `\$`, "`", "\\`")
	envEscaped  = "\\\"$`"
	envFixHint  = `write it as KEY="value" with \, ", $ and ` + "`" + ` escaped by a backslash (rindactl schedule env-file does this)`
	envLineHint = "use KEY=value lines"
)

// EnvLine writes one variable in the env-file format. It fails on a key sh
// cannot assign or a value no single line can carry (a newline, a NUL).
func EnvLine(key, value string) (string, error) {
	if !envKey.MatchString(key) {
		return "", fmt.Errorf("env file: %q is not a variable name; use letters, digits and _", key)
	}
	if strings.ContainsAny(value, "\x00\n\r") {
		return "", fmt.Errorf("env file: %s contains a newline or NUL, which an env file line cannot carry", key)
	}
	return key + `="` + envEscaper.Replace(value) + `"`, nil
}

// EnvFileError names the line of an env file that sh and systemd would read
// differently. It never quotes the value: env files hold secrets.
type EnvFileError struct {
	Line   int
	Key    string // empty when the line has no key
	Reason string
}

func (e *EnvFileError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("line %d: %s", e.Line, e.Reason)
	}
	return fmt.Sprintf("line %d: %s: %s", e.Line, e.Key, e.Reason)
}

// ParseEnvFile reads an env file in the format above and returns its
// variables in order, exactly as both sh and systemd would set them. Every
// line outside the format is reported; the values of good lines are still
// returned.
func ParseEnvFile(r io.Reader) ([][2]string, []*EnvFileError, error) {
	var vars [][2]string
	var problems []*EnvFileError
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	sc.Split(splitLF) // keep a CR, which sh would keep in the value
	for n := 1; sc.Scan(); n++ {
		key, value, err := parseEnvLine(sc.Text())
		if err != nil {
			err.Line = n
			problems = append(problems, err)
			continue
		}
		if key != "" {
			vars = append(vars, [2]string{key, value})
		}
	}
	return vars, problems, sc.Err()
}

// parseEnvLine returns an empty key for a blank or comment line.
func parseEnvLine(line string) (string, string, *EnvFileError) {
	if strings.HasSuffix(line, "\r") {
		return "", "", &EnvFileError{Reason: "ends with a carriage return (CRLF); save the file with Unix line endings"}
	}
	trimmed := strings.TrimLeft(line, " \t")
	if trimmed == "" || strings.HasPrefix(trimmed, "#") {
		return "", "", nil
	}
	key, raw, ok := strings.Cut(line, "=")
	switch {
	case !ok:
		return "", "", &EnvFileError{Reason: "no '=': " + envLineHint}
	case strings.HasPrefix(key, "export "):
		return "", "", &EnvFileError{Key: strings.TrimSpace(strings.TrimPrefix(key, "export ")), Reason: "drop 'export ': systemd does not read it"}
	case !envKey.MatchString(key):
		return "", "", &EnvFileError{Reason: "the text before '=' is not a variable name (letters, digits and _, no spaces): " + envLineHint}
	}
	value, reason := envValue(raw)
	if reason != "" {
		return "", "", &EnvFileError{Key: key, Reason: reason}
	}
	return key, value, nil
}

// envValue is the value sh and systemd both read from raw (what follows
// '='), or why they would read it differently.
func envValue(raw string) (value, reason string) {
	switch {
	case strings.HasPrefix(raw, `"`):
		return doubleQuoted(raw[1:])
	case strings.HasPrefix(raw, `'`):
		value, rest, closed := strings.Cut(raw[1:], `'`)
		if !closed {
			return "", "the single quote is not closed on this line; " + envFixHint
		}
		if strings.TrimRight(rest, " \t") != "" {
			return "", "text after the closing quote is read differently by sh and systemd; " + envFixHint
		}
		return value, ""
	case !envBare.MatchString(raw):
		return "", "an unquoted value with spaces, quotes or shell characters (& ; $ | < > ...) is read differently by sh and systemd; " + envFixHint
	}
	return raw, ""
}

// doubleQuoted reads a double-quoted value after its opening quote.
func doubleQuoted(raw string) (value, reason string) {
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '\\' && i+1 < len(raw) && strings.IndexByte(envEscaped, raw[i+1]) >= 0:
			b.WriteByte(raw[i+1])
			i++
		case c == '"':
			if strings.TrimRight(raw[i+1:], " \t") != "" {
				return "", "text after the closing quote is read differently by sh and systemd; " + envFixHint
			}
			return b.String(), ""
		case c == '$' || c == '`':
			return "", "an unescaped $ or ` is expanded by sh but not by systemd; " + envFixHint
		default:
			b.WriteByte(c)
		}
	}
	return "", "the double quote is not closed on this line; " + envFixHint
}

// splitLF splits at \n only: bufio.ScanLines would hide a CRLF line end.
func splitLF(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return len(data), data, nil
	}
	return 0, nil, nil
}

// WriteEnvFile writes vars to path in the env-file format, readable by its
// owner only, replacing any file there in one rename so a tick never
// sources half a file.
func WriteEnvFile(path string, vars [][2]string) error {
	var b strings.Builder
	b.WriteString("# rindactl environment, written by `rindactl schedule env-file`.\n")
	b.WriteString("# Read by sh (crontab: set -a; . FILE) and systemd (EnvironmentFile=) alike;\n")
	b.WriteString("# keep the KEY=\"value\" form (escape \\ \" $ ` with a backslash).\n")
	for _, kv := range vars {
		line, err := EnvLine(kv[0], kv[1])
		if err != nil {
			return err
		}
		b.WriteString(line + "\n")
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("env file %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("env file %s: %w", path, err)
	}
	if _, err := io.WriteString(tmp, b.String()); err != nil {
		tmp.Close()
		return fmt.Errorf("env file %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("env file %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("env file %s: %w", path, err)
	}
	return nil
}

// CheckEnvFile validates the env file at path. A missing file is not an
// error here: Kubernetes deployments have none; callers decide.
func CheckEnvFile(path string) ([]*EnvFileError, error) {
	_, problems, err := ReadEnvFile(path)
	return problems, err
}

// ReadEnvFile reads the env file at path: its variables as sh would set
// them (the last assignment of a name wins) and its problems, as
// CheckEnvFile.
func ReadEnvFile(path string) (map[string]string, []*EnvFileError, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer fh.Close()
	list, problems, err := ParseEnvFile(fh)
	vars := make(map[string]string, len(list))
	for _, kv := range list {
		vars[kv[0]] = kv[1]
	}
	return vars, problems, err
}
