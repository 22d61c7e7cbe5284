package enrich

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"net/mail"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/rindactl/rindactl/internal/address"
	"github.com/rindactl/rindactl/internal/csvline"
	"github.com/rindactl/rindactl/internal/store"
)

const (
	// ImportMaxBytesDefault bounds a lead CSV file: 2M leads weigh about
	// 115 MiB. Imports stream, so the bound is about how long one
	// all-or-nothing transaction may grow, not memory.
	ImportMaxBytesDefault int64 = 256 << 20
	// ImportMaxFieldLen is the longest value any column accepts; longer
	// values are a broken export, not a name or a domain.
	ImportMaxFieldLen = 1000
)

// LeadColumns are the columns a lead CSV may have; the first three are
// required in the header (values may still be empty where allowed).
var LeadColumns = []string{"first_name", "last_name", "company_domain", "email", "external_id", "company", "timezone"}

var requiredLeadColumns = LeadColumns[:3]

// LineError is one rejected CSV line.
type LineError struct {
	Line   int
	Reason string
}

func (e LineError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Reason) }

// HeaderError is a lead CSV whose header (or emptiness) makes every line
// unreadable.
type HeaderError struct{ msg string }

func (e *HeaderError) Error() string { return e.msg }

// LeadReader streams a lead CSV one line at a time, so memory does not grow
// with the file. It checks each line on its own; repeated external_ids
// across lines are the caller's to find.
type LeadReader struct {
	cr   *csv.Reader
	cols map[string]int
}

// NewLeadReader reads and checks the header line.
func NewLeadReader(r io.Reader) (*LeadReader, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1 // checked per line, so the error names the line
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &HeaderError{"the file is empty; it needs a header line: " + strings.Join(requiredLeadColumns, ",")}
	}
	if err != nil {
		return nil, csvError(err)
	}
	cols, err := leadColumns(header)
	if err != nil {
		return nil, &HeaderError{err.Error()}
	}
	return &LeadReader{cr: cr, cols: cols}, nil
}

// Next returns the next line: its record, or the reasons it is invalid as a
// LineError. It returns io.EOF after the last line, and a SyntaxError when
// the CSV itself is broken.
func (lr *LeadReader) Next() (store.LeadImport, *LineError, error) {
	rec, err := lr.cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return store.LeadImport{}, nil, io.EOF
		}
		return store.LeadImport{}, nil, csvError(err)
	}
	line, _ := lr.cr.FieldPos(0)
	r, reasons := parseLeadLine(rec, lr.cols, line)
	if len(reasons) > 0 {
		return r, &LineError{Line: line, Reason: strings.Join(reasons, "; ")}, nil
	}
	return r, nil, nil
}

// InputOffset is how many bytes of the file have been read (for progress).
func (lr *LeadReader) InputOffset() int64 { return lr.cr.InputOffset() }

// SyntaxError is a CSV the reader cannot continue past (an unclosed quote).
type SyntaxError struct{ msg string }

func (e *SyntaxError) Error() string { return e.msg }

func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &SyntaxError{fmt.Sprintf("line %d: %v (fix the quoting; nothing was imported)", pe.StartLine, pe.Err)}
	}
	return fmt.Errorf("reading CSV: %w", err)
}

// leadColumns maps each known column to its index in the header.
func leadColumns(header []string) (map[string]int, error) {
	cols := make(map[string]int, len(header))
	for i, h := range header {
		name := strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))
		if !slices.Contains(LeadColumns, name) {
			return nil, fmt.Errorf("unknown column %q in the header; allowed columns: %s", h, strings.Join(LeadColumns, ", "))
		}
		if _, dup := cols[name]; dup {
			return nil, fmt.Errorf("column %q appears twice in the header", name)
		}
		cols[name] = i
	}
	var missing []string
	for _, c := range requiredLeadColumns {
		if _, ok := cols[c]; !ok {
			missing = append(missing, c)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("the header lacks required column(s) %s; it needs at least %s", strings.Join(missing, ", "), strings.Join(requiredLeadColumns, ","))
	}
	return cols, nil
}

func parseLeadLine(rec []string, cols map[string]int, line int) (store.LeadImport, []string) {
	f := csvline.Fields{Rec: rec, Cols: cols, MaxLen: ImportMaxFieldLen}
	if m := f.CountMismatch(); m != "" {
		return store.LeadImport{Line: line}, []string{m}
	}
	lr := store.LeadImport{
		Line:       line,
		ExternalID: f.Get("external_id"),
		FirstName:  f.Get("first_name"),
		LastName:   f.Get("last_name"),
		Company:    f.Get("company"),
		Domain:     strings.ToLower(f.Get("company_domain")),
		Email:      f.Get("email"),
		Timezone:   f.Get("timezone"),
	}
	reasons := f.Reasons
	if lr.Email != "" {
		// Stored in its canonical spelling: dedupe, suppressions and
		// campaign_recipients compare stored values.
		canonical, err := address.Canonical(lr.Email)
		switch {
		case err != nil:
			reasons = append(reasons, fmt.Sprintf("email %q: %v", lr.Email, err))
		case !validEmail(canonical):
			reasons = append(reasons, fmt.Sprintf("email %q is not an address like name@example.com", lr.Email))
		}
		lr.Email = canonical
	}
	return lr, append(reasons, leadProblems(lr)...)
}

// leadProblems are what makes a lead (its email already canonical)
// unusable: a domain that is not one, nothing to enrich from, an unknown
// time zone.
func leadProblems(lr store.LeadImport) []string {
	var reasons []string
	if lr.Domain != "" && !validDomain(lr.Domain) {
		reasons = append(reasons, fmt.Sprintf("company_domain %q is not a domain like example.com (no scheme, path or spaces)", lr.Domain))
	}
	switch {
	case lr.Email != "":
	case lr.Domain == "":
		reasons = append(reasons, "no email and no company_domain: nothing to enrich from")
	case lr.FirstName == "" && lr.LastName == "":
		reasons = append(reasons, "no email and no first_name or last_name: nothing to enrich from")
	}
	if lr.Timezone != "" {
		if _, err := time.LoadLocation(lr.Timezone); err != nil || strings.EqualFold(lr.Timezone, "local") {
			reasons = append(reasons, fmt.Sprintf("timezone %q is not an IANA zone like Europe/Paris", lr.Timezone))
		}
	}
	return reasons
}

func validEmail(s string) bool {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Address != s || a.Name != "" {
		return false
	}
	_, domain, _ := strings.Cut(s, "@")
	return validDomain(domain)
}

// validDomain accepts host names with at least one dot: letters (IDN
// included), digits, hyphens and dots, labels not starting or ending with a
// hyphen.
func validDomain(s string) bool {
	if len(s) > 253 || !strings.Contains(s, ".") {
		return false
	}
	for label := range strings.SplitSeq(s, ".") {
		if !validLabel(label) {
			return false
		}
	}
	return true
}

// validLabel is one label of validDomain.
func validLabel(label string) bool {
	if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
		return false
	}
	for _, r := range label {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r > unicode.MaxASCII && unicode.IsLetter(r)) {
			return false
		}
	}
	return true
}
