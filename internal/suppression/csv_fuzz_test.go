package suppression

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/rindactl/rindactl/internal/address"
)

// FuzzSuppressionCSV feeds the suppression CSV reader (`suppressions import`) any
// bytes. It never panics and always ends (one line per record, each record
// at least a byte); a rejected file is a HeaderError or SyntaxError and a
// rejected line names its line in valid UTF-8; an accepted line is a
// canonical address with its hash (or a hash alone), a reason word, and
// reads back the same once written as an export line.
func FuzzSuppressionCSV(f *testing.F) {
	for _, seed := range []string{
		"email,email_sha256,reason,created_at\n",
		"email\nlead1@example.test\nLead2@Example.TEST\n",
		"\ufeffEmail, Reason\r\n jorg@bücher.example ,unsubscribed\r\n",
		"email,email_sha256,reason,created_at\nzoe\u0308@example.test,,bounced,2026-06-05T04:11:00+09:00\n",
		"email,email_sha256,reason,created_at\n,5e884898da28047151d0e56f8dc6292773603d0d6aabbdd62a11ef721d1542d8,forgotten,2026-06-05T04:11:00.123456789Z\n",
		"email,email_sha256\na@b.test,0000000000000000000000000000000000000000000000000000000000000000\n",
		"email,reason\n\u202eevil@example.test,Bad Reason\n",
		"email\n\"unterminated@example.test\n",
		"email,email\na@b.test,c@d.test\n",
		"email,phone\na@b.test,1\n",
		"email\na@b.test,extra\n\x00@nul.test\n",
		"email,created_at\na@xn--bcher-kva.example,yesterday\n",
		"email,created_at\na@b.test,0000-01-01T00:00:00+01:00\n",                  // year -1 in UTC: refused, else its export does not read back
		"email,created_at\na@b.test,0001-01-01T00:00:00Z\n",                       // the zero time: refused, not replaced by now
		"email,reason\n'=1+2@evil.test,unsubscribed\n-x@evil.test,\n\"'\t@x\",\n", // neutralised cells
		"",
		"\n\n\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			var he *HeaderError
			var se *SyntaxError
			if !errors.As(err, &he) && !errors.As(err, &se) {
				t.Fatalf("header: %T %v, want a HeaderError or SyntaxError", err, err)
			}
			return
		}
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("more than %d lines from %d bytes", i, len(data))
			}
			e, lineErr, err := r.Next()
			if errors.Is(err, io.EOF) {
				return
			}
			if err != nil {
				var se *SyntaxError
				if !errors.As(err, &se) {
					t.Fatalf("line %d: %T %v, want a SyntaxError", i, err, err)
				}
				return
			}
			if off := r.InputOffset(); off > int64(len(data)) {
				t.Fatalf("offset %d past %d bytes", off, len(data))
			}
			if lineErr != nil {
				if lineErr.Line < 2 || lineErr.Reason == "" || !utf8.ValidString(lineErr.Reason) {
					t.Fatalf("line error %+v", lineErr)
				}
				continue
			}
			checkEntry(t, e)
		}
	})
}

// checkEntry asserts what import writes from an accepted line, and that
// the line an export writes for it reads back as the same entry.
func checkEntry(t *testing.T, e Entry) {
	t.Helper()
	if len(e.SHA256) != HashSize || !reasonPattern.MatchString(e.Reason) {
		t.Fatalf("entry %+v", e)
	}
	if e.Email != "" {
		canonical, err := address.Canonical(e.Email)
		if err != nil || canonical != e.Email || !bytes.Equal(Hash(e.Email), e.SHA256) {
			t.Fatalf("entry %+v: canonical %q (%v); a stored address must be its own canonical form, keyed by its hash", e, canonical, err)
		}
	}
	rec := exportRecord(e.Email, e.SHA256, e.Reason, e.CreatedAt)
	if e.CreatedAt.IsZero() {
		rec[3] = ""
	}
	for _, cell := range rec {
		if cell != "" && strings.IndexByte(formulaLead, cell[0]) >= 0 {
			t.Fatalf("export cell %q of %+v starts a spreadsheet formula", cell, e)
		}
	}
	var b strings.Builder
	w := csv.NewWriter(&b)
	_ = w.Write(Columns)
	_ = w.Write(rec)
	w.Flush()
	r, err := NewReader(strings.NewReader(b.String()))
	if err != nil {
		t.Fatalf("export of %+v: %v", e, err)
	}
	back, lineErr, err := r.Next()
	if err != nil || lineErr != nil {
		t.Fatalf("export line %q of %+v does not read back: %v %v", b.String(), e, lineErr, err)
	}
	if back.Email != e.Email || !bytes.Equal(back.SHA256, e.SHA256) || back.Reason != e.Reason || !back.CreatedAt.Equal(e.CreatedAt) {
		t.Fatalf("export of %+v reads back as %+v", e, back)
	}
}
