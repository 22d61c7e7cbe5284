package suppression

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/csvline"
)

// The suppression CSV, as `suppressions export` writes it and `suppressions
// import` reads it. A row of a forgotten person has an empty address and
// only the hash.
const (
	colAddress = "email"
	colHash    = "email_sha256"
	colReason  = "reason"
	colCreated = "created_at"
)

// Columns are the columns of a suppression CSV, in export order.
var Columns = []string{colAddress, colHash, colReason, colCreated}

const (
	// ImportMaxBytesDefault bounds a suppression CSV: a million addresses
	// weigh about 100 MiB with their hashes.
	ImportMaxBytesDefault int64 = 256 << 20
	// fieldMaxLen is the longest value any column accepts.
	fieldMaxLen = 1000
	// ReasonImported is the reason of a line that names none.
	ReasonImported = "imported"
	// ReasonForgotten is the reason of the row `lead forget` leaves.
	ReasonForgotten = "forgotten"
)

var reasonPattern = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)

// Entry is one suppression: an address (canonical), or only its hash.
type Entry struct {
	Line int
	// Email is the canonical address; empty for a forgotten person.
	Email string
	// SHA256 is Hash(Email), or the hash alone.
	SHA256 []byte
	Reason string
	// CreatedAt is when the address was suppressed; zero: now.
	CreatedAt time.Time
}

// LineError is one rejected CSV line.
type LineError struct {
	Line   int
	Reason string
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// HeaderError is a CSV whose header (or emptiness) makes every line
// unreadable.
type HeaderError struct{ msg string }

func (e *HeaderError) Error() string { return e.msg }

// SyntaxError is a CSV the reader cannot continue past (an unclosed quote).
type SyntaxError struct{ msg string }

func (e *SyntaxError) Error() string { return e.msg }

// CreatedAtSkew is how far in the future a created_at may be: another
// host's clock, not a date typed wrong.
const CreatedAtSkew = 24 * time.Hour

// createdAtMin is the earliest created_at accepted: no suppression list
// predates 1970, and the zero time (0001-01-01) is an unset value, not a
// date.
var createdAtMin = time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC)

// Reader streams a suppression CSV one line at a time.
type Reader struct {
	cr   *csv.Reader
	cols map[string]int
	now  func() time.Time // the upper bound of created_at, with CreatedAtSkew
}

// NewReader reads and checks the header line: email or email_sha256 (or
// both), optionally reason and created_at, nothing else.
func NewReader(r io.Reader) (*Reader, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked per line, so the error names the line
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &HeaderError{"the file is empty; it needs a header line: " + strings.Join(Columns, ",")}
	}
	if err != nil {
		return nil, csvError(err)
	}
	cols := map[string]int{}
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if !slices.Contains(Columns, name) {
			return nil, &HeaderError{fmt.Sprintf("unknown column %q in the header; allowed columns: %s", h, strings.Join(Columns, ", "))}
		}
		if _, dup := cols[name]; dup {
			return nil, &HeaderError{fmt.Sprintf("column %q appears twice in the header", name)}
		}
		cols[name] = i
	}
	_, hasAddress := cols[colAddress]
	_, hasHash := cols[colHash]
	if !hasAddress && !hasHash {
		return nil, &HeaderError{"the header needs an email column (or email_sha256 for forgotten addresses); e.g. " + strings.Join(Columns, ",")}
	}
	return &Reader{cr: cr, cols: cols, now: time.Now}, nil
}

// Next returns the next line: its entry, or why it is invalid. It returns
// io.EOF after the last line and a SyntaxError when the CSV is broken.
func (r *Reader) Next() (Entry, *LineError, error) {
	rec, err := r.cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return Entry{}, nil, io.EOF
		}
		return Entry{}, nil, csvError(err)
	}
	line, _ := r.cr.FieldPos(0)
	e, reasons := r.parse(rec, line)
	if len(reasons) > 0 {
		return e, &LineError{Line: line, Reason: strings.Join(reasons, "; ")}, nil
	}
	return e, nil, nil
}

// InputOffset is how many bytes of the file have been read.
func (r *Reader) InputOffset() int64 { return r.cr.InputOffset() }

func (r *Reader) parse(rec []string, line int) (Entry, []string) {
	e := Entry{Line: line}
	f := csvline.Fields{Rec: rec, Cols: r.cols, MaxLen: fieldMaxLen}
	if m := f.CountMismatch(); m != "" {
		return e, []string{m}
	}
	given, hash, reason, created := restore(f.Get(colAddress)), restore(f.Get(colHash)), restore(f.Get(colReason)), restore(f.Get(colCreated))
	if len(f.Reasons) > 0 {
		return e, f.Reasons
	}
	var reasons []string
	e.Email, e.SHA256, reasons = identity(given, hash)
	e.Reason = ReasonImported
	if reason != "" {
		if !reasonPattern.MatchString(reason) {
			reasons = append(reasons, fmt.Sprintf("reason %q is not a word like unsubscribed or bounced (a-z, 0-9, _)", reason))
		}
		e.Reason = reason
	}
	if created != "" {
		t, reason := r.createdAt(created)
		if reason != "" {
			reasons = append(reasons, reason)
		}
		e.CreatedAt = t
	}
	return e, reasons
}

// createdAt reads a created_at cell: an RFC 3339 time from 1970 to now
// plus CreatedAtSkew, or why not. Out of that range is a line error, never
// replaced: the zero time 0001-01-01 (which the database would have set to
// now) and a date typed wrong alike.
func (r *Reader) createdAt(cell string) (time.Time, string) {
	col := fmt.Sprintf("created_at (column %d)", r.cols[colCreated]+1)
	t, err := time.Parse(time.RFC3339, cell)
	if err != nil {
		return t, fmt.Sprintf("%s %q is not a time like 2026-06-05T04:11:00Z", col, cell)
	}
	if latest := r.now().Add(CreatedAtSkew); t.Before(createdAtMin) || t.After(latest) {
		return t, fmt.Sprintf("%s %q is outside 1970-01-01T00:00:00Z to %s (now plus %s)", col, cell,
			latest.UTC().Truncate(time.Second).Format(time.RFC3339), CreatedAtSkew)
	}
	return t, ""
}

// identity is who a line suppresses: the canonical address given and its
// hash, or only a hash (an export of a forgotten person); a hash beside an
// address must be that address's.
func identity(given, hash string) (email string, sha []byte, reasons []string) {
	if given != "" {
		canonical, err := address.Canonical(given)
		if err != nil {
			reasons = append(reasons, "email "+err.Error())
		} else {
			email, sha = canonical, Hash(canonical)
		}
	}
	if hash != "" {
		h, err := ParseHashHex(hash)
		switch {
		case err != nil:
			reasons = append(reasons, "email_sha256 is "+err.Error())
		case sha != nil && !bytes.Equal(h, sha):
			reasons = append(reasons, "email_sha256 is not the SHA-256 of the address (leave it empty to have it computed)")
		case sha == nil && given == "":
			sha = h
		}
	}
	if given == "" && hash == "" {
		reasons = append(reasons, "no email (and no email_sha256)")
	}
	return email, sha, reasons
}

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &SyntaxError{fmt.Sprintf("line %d: %v (fix the quoting; nothing was imported)", pe.StartLine, pe.Err)}
	}
	return fmt.Errorf("reading CSV: %w", err)
}
