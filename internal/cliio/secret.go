package cliio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"golang.org/x/term"
)

// maxSecretLen bounds a secret read from standard input.
const maxSecretLen = 4096

// ReadSecret reads one secret from standard input: on a terminal it asks
// with prompt (on stderr) and reads without echo; otherwise it reads what
// is piped in (at most 4 KiB). Surrounding white space is dropped, so a
// trailing newline does not become part of the secret. The secret is
// never echoed; "" means nothing was given.
func (s *IO) ReadSecret(prompt string) (string, error) {
	if f, ok := s.In.(*os.File); ok && s.stdinTTY {
		fmt.Fprint(s.ErrOut, prompt)
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(s.ErrOut)
		if err != nil {
			return "", errors.New("reading the secret from the terminal failed")
		}
		return strings.TrimSpace(string(b)), nil
	}
	b, err := io.ReadAll(io.LimitReader(s.In, maxSecretLen+1))
	if err != nil {
		return "", errors.New("reading the secret from standard input failed")
	}
	if len(b) > maxSecretLen {
		return "", fmt.Errorf("standard input holds more than %d bytes: give only the secret", maxSecretLen)
	}
	return strings.TrimSpace(string(b)), nil
}
