// Package cliio is the one output layer every command writes through: it
// knows whether stdout is a terminal, whether colour is wanted, and how to
// print the single JSON document that `--output json` promises.
package cliio

import (
	"bytes"
	"encoding/json"
	"io"
	"os"

	"golang.org/x/term"
)

// IO carries a command's streams and what is known about them.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer

	stdinTTY  bool
	stdoutTTY bool
	stderrTTY bool
	noColor   bool
}

// System returns the process's real streams.
func System() *IO {
	return &IO{
		In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr,
		stdinTTY:  term.IsTerminal(int(os.Stdin.Fd())),
		stdoutTTY: term.IsTerminal(int(os.Stdout.Fd())),
		stderrTTY: term.IsTerminal(int(os.Stderr.Fd())),
		noColor:   os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb",
	}
}

// Test returns an IO over buffers, as a non-terminal without colour.
func Test() (ioStreams *IO, in *bytes.Buffer, out *bytes.Buffer, errOut *bytes.Buffer) {
	in, out, errOut = &bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{}
	return &IO{In: in, Out: out, ErrOut: errOut, noColor: true}, in, out, errOut
}

// SetTTY marks the streams as terminals (for tests of interactive paths).
func (s *IO) SetTTY(stdin, stdout, stderr bool) {
	s.stdinTTY, s.stdoutTTY, s.stderrTTY = stdin, stdout, stderr
}

func (s *IO) IsStdinTTY() bool  { return s.stdinTTY }
func (s *IO) IsStdoutTTY() bool { return s.stdoutTTY }
func (s *IO) IsStderrTTY() bool { return s.stderrTTY }

// ColorEnabled is true only on a terminal without NO_COLOR.
func (s *IO) ColorEnabled() bool { return s.stdoutTTY && !s.noColor }

// CanPrompt reports whether a question can be asked and answered.
func (s *IO) CanPrompt() bool { return s.stdinTTY && s.stdoutTTY }

// WriteJSON prints v as one indented JSON document on stdout.
func (s *IO) WriteJSON(v any) error {
	enc := json.NewEncoder(s.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
